// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// Package switchtest tests the switch from the legacy ernic-exporter to the
// otelcol-ernic package, and the rollback, as deploy/README.md documents
// them, on a Debian root booted with systemd-nspawn (`make switch-test`;
// `make debian-root` makes the root once with debootstrap).
//
// In the container, rocm-ernic.service is the run-directory simulator, and
// ernic-exporter.service is the legacy exporter's unit as its package
// leaves it, running a stand-in (the collector with config/local.yaml):
// the Python program is not ours to ship, and test/e2e's contract tests
// prove the names and labels; here they must only stay the same. A real
// Prometheus on the host scrapes the container's port every 5 s.
//
// The simulator runs in the container, not on the host with its run
// directory bind-mounted: the receiver looks for the server processes of
// instances.json in /proc, and the container's PID namespace would hide
// the host's. Its run directory and the port are not the defaults, but
// from /etc/rocm-ernic/rocm-ernic.env: that the installed service serves
// them shows that it reads the file (and the port is free on the host,
// whose network the container shares).
package switchtest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

const (
	envFile      = "/etc/rocm-ernic/rocm-ernic.env"
	legacyUnit   = "ernic-exporter.service"
	legacyBin    = "/usr/bin/ernic-exporter"
	legacyConfig = "/usr/share/rocm-ernic-exporter/config.yaml"
	unit         = "otelcol-ernic.service"
	// runDir is not rocm-ernic's default (/run/rocm-ernic): that the
	// series come from it shows that ERNIC_RUN_DIR is read from envFile.
	runDir = "/run/ernic-switch-test"
	job    = "ernic"
	// phase is how long each of the legacy exporter, otelcol-ernic and
	// the legacy exporter again is scraped.
	phase = 30 * time.Second
)

// TestSwitchFromLegacyExporterAndBack: ernic-exporter serves, then `dpkg
// -i` of the package and `systemctl disable ernic-exporter` (the switch),
// then `systemctl enable --now ernic-exporter` and `systemctl disable
// otelcol-ernic` (the rollback), and `dpkg -r otelcol-ernic`. Prometheus may
// miss at most one scrape at the switch and at the rollback; the series
// keep their names and labels and no counter resets.
func TestSwitchFromLegacyExporterAndBack(t *testing.T) {
	s := newSetup(t)
	c, repo, port, health, deb, debIn, begin := s.c, s.repo, s.port, s.health, s.deb, s.debIn, s.begin
	c.CopyFile(t, harness.CollectorBinary(t), legacyBin, 0o755)
	c.CopyFile(t, filepath.Join(repo, "config/local.yaml"), legacyConfig, 0o644)
	c.CopyFile(t, filepath.Join(repo, "test/switch/testdata/ernic-exporter.service"), "/usr/lib/systemd/system/"+legacyUnit, 0o644)
	c.Chroot(t, "env", "DPKG_MAINTSCRIPT_PACKAGE=rocm-ernic-exporter", "deb-systemd-helper", "enable", legacyUnit)
	c.Boot(t, 90*time.Second)
	t.Logf("container booted %.1f s after the test began", time.Since(begin).Seconds())

	wantState(t, c, "rocm-ernic.service", "active enabled")
	wantState(t, c, legacyUnit, "active enabled")
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	waitComplete(t, url, 60*time.Second)
	wantListener(t, port, "ernic-exporter")

	prom := harness.StartPrometheus(t, harness.PrometheusBinary(t), "", 30*time.Second, fmt.Sprintf(
		"global:\n  scrape_interval: %s\n  scrape_timeout: 4s\nscrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n",
		promDuration(scrapeInterval), job, port))
	polls := startPoller(t, url, 100*time.Millisecond)
	legacyFrom := time.Now()
	time.Sleep(phase)

	// The switch, as deploy/README.md says.
	switchAt := time.Now()
	t.Logf("dpkg -i %s:\n%s", filepath.Base(deb), c.MustRun(t, "dpkg", "-i", debIn))
	c.MustRun(t, "systemctl", "disable", legacyUnit)
	switchDone := time.Now()
	t.Logf("switch: dpkg -i and systemctl disable took %.2f s", switchDone.Sub(switchAt).Seconds())
	wantState(t, c, unit, "active enabled")
	wantState(t, c, legacyUnit, "inactive disabled")
	wantListener(t, port, "otelcol-ernic")
	checkInstalledService(t, c, health)
	time.Sleep(phase)

	// The rollback, as deploy/README.md says.
	rollbackAt := time.Now()
	c.MustRun(t, "systemctl", "enable", "--now", legacyUnit)
	c.MustRun(t, "systemctl", "disable", unit)
	rollbackDone := time.Now()
	t.Logf("rollback: systemctl enable --now and disable took %.2f s", rollbackDone.Sub(rollbackAt).Seconds())
	wantState(t, c, legacyUnit, "active enabled")
	wantState(t, c, unit, "inactive disabled")
	wantListener(t, port, "ernic-exporter")
	// The package removed after the rollback, as deploy/README.md allows:
	// its prerm stops nothing that runs, and the legacy exporter serves on.
	t.Logf("dpkg -r otelcol-ernic:\n%s", c.MustRun(t, "dpkg", "-r", "otelcol-ernic"))
	wantState(t, c, legacyUnit, "active enabled")
	wantListener(t, port, "ernic-exporter")
	time.Sleep(phase)
	end := time.Now()

	// Prometheus's view. The legacy phase sets what a complete scrape is.
	full, hi := sampleCounts(t, prom, job, legacyFrom, switchAt)
	if full != hi || full < 50 {
		t.Fatalf("samples per scrape of the legacy exporter: %v to %v, want one steady count (the simulator's fixed instances)", full, hi)
	}
	legacy := scrapesIn(t, prom, job, legacyFrom, switchAt, full)
	switched := scrapesIn(t, prom, job, switchAt, rollbackAt, full)
	rolledBack := scrapesIn(t, prom, job, rollbackAt, end, full)
	switchGap, switchDown, switchEmpty := polls.Gap(switchAt.Add(-time.Second), rollbackAt)
	rollbackGap, rollbackDown, rollbackEmpty := polls.Gap(rollbackAt.Add(-time.Second), end)
	t.Logf("%d samples per scrape", int(full))
	t.Logf("legacy exporter: %v", legacy)
	t.Logf("switch: %v; /metrics without ernic_ series for %d ms (GETs every 100 ms: %d found no listener, %d no series yet)",
		switched, switchGap.Milliseconds(), switchDown, switchEmpty)
	t.Logf("rollback: %v; /metrics without ernic_ series for %d ms (GETs every 100 ms: %d found no listener, %d no series yet)",
		rolledBack, rollbackGap.Milliseconds(), rollbackDown, rollbackEmpty)
	if legacy.Bad() != 0 || legacy.Scrapes < 5 {
		t.Errorf("before the switch: %v, want every scrape complete and at least 5", legacy)
	}
	if switched.Bad() > 1 || switched.Scrapes < 5 {
		t.Errorf("switch: %v, want at most one scrape missed or incomplete", switched)
	}
	if rolledBack.Bad() > 1 || rolledBack.Scrapes < 5 {
		t.Errorf("rollback: %v, want at most one scrape missed or incomplete", rolledBack)
	}
	// A gap shorter than the scrape interval is what makes one failed
	// scrape the most, whichever moment Prometheus scrapes at.
	if switchGap >= scrapeInterval || rollbackGap >= scrapeInterval {
		t.Errorf("/metrics without ernic_ series for %v at the switch and %v at the rollback, want less than the scrape interval %v",
			switchGap, rollbackGap, scrapeInterval)
	}

	checkSeriesContinue(t, prom, repo, []window{
		{"legacy exporter", legacyFrom, switchAt},
		{"otelcol-ernic", switchDone.Add(scrapeInterval), rollbackAt},
		{"legacy exporter again", rollbackDone.Add(scrapeInterval), end},
	})
	t.Logf("test took %.0f s", time.Since(begin).Seconds())
}

// setup is what the tests of a booted container start from: a copy of
// the Debian root, not booted yet, with the environment file, the
// simulator as rocm-ernic.service (enabled) and the package in /root.
type setup struct {
	c            *container
	repo         string
	port, health int
	deb, debIn   string
	begin        time.Time
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts in a mount namespace, systemd-nspawn, dpkg in the container (CI runs as root)")
	}
	if _, err := exec.LookPath("systemd-nspawn"); err != nil {
		t.Skip("no systemd-nspawn to boot the Debian root with (apt-get install systemd-container; make test-deps installs it)")
	}
	s := &setup{repo: harness.RepoRoot(t), begin: time.Now()}
	base := debianRoot(t, s.repo)
	s.deb = debFile(t, s.repo)
	sim := filepath.Join(s.repo, "bin", "ernic-sim")
	if p := os.Getenv("SIM_BIN"); p != "" {
		sim = p
	}
	// A port other than 9840, and a free one: the host's network is shared.
	s.port, s.health = harness.FreePort(t), harness.FreePort(t)
	s.c = newContainerRoot(t, base)
	// Mode 0600, as the legacy package may leave it: systemd reads it as root.
	s.c.WriteFile(t, envFile, fmt.Appendf(nil, "ERNIC_RUN_DIR=%s\nERNIC_EXPORTER_PORT=%d\nERNIC_HEALTH_PORT=%d\n",
		runDir, s.port, s.health), 0o600)
	s.c.CopyFile(t, sim, "/usr/lib/rocm-ernic/ernic-sim", 0o755)
	s.c.CopyFile(t, filepath.Join(s.repo, "test/switch/testdata/rocm-ernic.service"), "/usr/lib/systemd/system/rocm-ernic.service", 0o644)
	s.debIn = "/root/" + filepath.Base(s.deb)
	s.c.CopyFile(t, s.deb, s.debIn, 0o644)
	// What the packages' postinst scripts do when there is no systemd
	// running: enable, and the boot starts them. (deb-systemd-helper wants
	// the package name that dpkg passes to maintainer scripts.)
	s.c.Chroot(t, "env", "DPKG_MAINTSCRIPT_PACKAGE=rocm-ernic", "deb-systemd-helper", "enable", "rocm-ernic.service")
	return s
}

func promDuration(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Seconds())) }

// debianRoot is the root `make debian-root` made: $DEBIAN_ROOT, else
// build/debian-root.
func debianRoot(t *testing.T, repo string) string {
	t.Helper()
	dir := os.Getenv("DEBIAN_ROOT")
	if dir == "" {
		dir = filepath.Join(repo, "build", "debian-root")
	}
	if _, err := os.Stat(filepath.Join(dir, "lib/systemd/systemd")); err != nil {
		t.Fatalf("no booted-container root at %s: run `make debian-root` (debootstrap, about 2 minutes) or `make switch-test`: %v", dir, err)
	}
	return dir
}

// debFile is the host architecture's .deb that `make package` made for
// this version: $SWITCH_DEB, else build/dist/otelcol-ernic_<deb version>-1_<arch>.deb.
func debFile(t *testing.T, repo string) string {
	t.Helper()
	if p := os.Getenv("SWITCH_DEB"); p != "" {
		return p
	}
	out, err := exec.Command(filepath.Join(repo, "scripts/version.sh"), "--deb").Output()
	if err != nil {
		t.Fatalf("scripts/version.sh --deb: %v", err)
	}
	arch, err := exec.Command("dpkg", "--print-architecture").Output()
	if err != nil {
		t.Fatalf("dpkg --print-architecture: %v", err)
	}
	p := filepath.Join(repo, "build/dist", fmt.Sprintf("otelcol-ernic_%s-1_%s.deb", strings.TrimSpace(string(out)), strings.TrimSpace(string(arch))))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no package for this version: run `make package` (or `make switch-test`): %v", err)
	}
	return p
}

func wantState(t *testing.T, c *container, unit, want string) {
	t.Helper()
	if got := c.UnitState(t, unit); got != want {
		status, _ := c.Run(context.Background(), "systemctl", "status", "--no-pager", "--lines=20", unit)
		t.Fatalf("%s: %q, want %q\n%s", unit, got, want, status)
	}
}

// wantListener fails the test unless the TCP listener on port belongs to a
// process named comm (ss -p, on the shared network).
func wantListener(t *testing.T, port int, comm string) {
	t.Helper()
	ss := harness.Tool(t, "ss", "apt-get install iproute2")
	out, err := exec.Command(ss, "-Htlnp", fmt.Sprintf("sport = :%d", port)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf(`(("%s",`, comm)) {
		t.Fatalf("port %d: want a listener of %s, ss -tlnp: %v\n%s", port, comm, err, out)
	}
}

func waitComplete(t *testing.T, url string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		families, err := harness.Scrape(ctx, url)
		cancel()
		if err == nil && families[probeName] != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no ernic_ series within %v: %v", url, d, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkInstalledService: the installed unit is active, reads the run
// directory and the ports of the environment file, and says so in the
// journal.
func checkInstalledService(t *testing.T, c *container, health int) {
	t.Helper()
	status := c.MustRun(t, "systemctl", "status", "--no-pager", "--lines=0", unit)
	if !strings.Contains(status, "Active: active (running)") {
		t.Errorf("systemctl status %s:\n%s", unit, status)
	}
	// The receiver logs it once it has found the run directory: within a
	// scrape or two of the start.
	want := fmt.Sprintf(`"run_dir": %q`, runDir)
	deadline := time.Now().Add(30 * time.Second)
	for {
		journal := c.MustRun(t, "journalctl", "--no-pager", "-o", "cat", "-u", unit)
		line := ""
		for _, l := range strings.Split(journal, "\n") {
			if strings.Contains(l, "Reading the rocm-ernic run directory") {
				line = l
			}
		}
		if strings.Contains(line, want) {
			t.Logf("journalctl -u %s: %s", unit, line)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("journalctl -u %s: no \"Reading the rocm-ernic run directory\" with %s within 30 s:\n%s", unit, want, harness.Tail(journal, 4000))
		}
		time.Sleep(500 * time.Millisecond)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/status", health))
	if err != nil {
		t.Fatalf("the health check on ERNIC_HEALTH_PORT %d: %v", health, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the health check on ERNIC_HEALTH_PORT %d: %s", health, resp.Status)
	}
}

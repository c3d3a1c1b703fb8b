// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package pkgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

const (
	unit       = "otelcol-ernic.service"
	conffile   = "/etc/otelcol-ernic/config.yaml"
	wantsLink  = "/etc/systemd/system/multi-user.target.wants/" + unit
	stateDir   = "/var/lib/otelcol-ernic"
	privateDir = "/var/lib/private/otelcol-ernic"
)

// status is dpkg's status and version of otelcol-ernic in the root.
func status(t *testing.T, r *throwawayRoot) string {
	t.Helper()
	out, err := r.Run("dpkg-query", "--root="+r.Dir, "-W", "-f=${db:Status-Abbrev}${Version}", "otelcol-ernic")
	if err != nil {
		return "not installed"
	}
	return strings.TrimSpace(out)
}

// TestDpkgInstallUpgradePurge: the host architecture's .deb installed with
// dpkg into a throwaway root (maintainer scripts run in it, without a running
// systemd), over an older version, removed and purged.
func TestDpkgInstallUpgradePurge(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("no package for %s", runtime.GOARCH)
	}
	r := newThrowawayRoot(t)
	semver, debVersion := packages(t)
	deb := debPath(t, runtime.GOARCH)
	// An older version of the same package: an upgrade from it to this one.
	old, _ := repackage(t, runtime.GOARCH, "0.0.1-test.1")
	const oldVersion = "0.0.1~test.1-1"
	if out, err := r.Run("dpkg", "--compare-versions", oldVersion, "lt", debVersion); err != nil {
		t.Fatalf("%s does not sort before %s: %v %s", oldVersion, debVersion, err, out)
	}

	// Install: the conffile, the unit enabled, nothing started.
	t.Logf("dpkg -i %s:\n%s", filepath.Base(old), r.MustRun(t, "dpkg", "--root="+r.Dir, "-i", old))
	if got := status(t, r); got != "ii "+oldVersion {
		t.Fatalf("after dpkg -i: %q", got)
	}
	// The credentials' directory is root's alone.
	if got := strings.TrimSpace(r.MustRun(t, "chroot", r.Dir, "stat", "-c", "%a %U:%G", "/etc/otelcol-ernic/credentials")); got != "700 root:root" {
		t.Errorf("/etc/otelcol-ernic/credentials: %q, want 700 root:root", got)
	}
	// deb-systemd-helper may name it /lib/systemd/system/... (merged /usr).
	if got := r.MustRun(t, "chroot", r.Dir, "readlink", "-f", wantsLink); strings.TrimSpace(got) != "/usr/lib/systemd/system/"+unit {
		t.Errorf("%s -> %q, want the packaged unit", wantsLink, got)
	}

	// The administrator edits the conffile; the upgrade keeps it.
	edited := r.ReadFile(t, conffile) + "# edited by the administrator\n"
	writeInRoot(t, r, conffile, edited)
	t.Logf("dpkg -i %s:\n%s", filepath.Base(deb), r.MustRun(t, "dpkg", "--root="+r.Dir, "-i", deb))
	if got := status(t, r); got != "ii "+debVersion {
		t.Fatalf("after the upgrade: %q, want ii %s", got, debVersion)
	}
	if got := r.ReadFile(t, conffile); got != edited {
		t.Errorf("the upgrade replaced the edited %s", conffile)
	}
	if r.Exists(t, conffile+".dpkg-dist") || r.Exists(t, conffile+".dpkg-new") {
		t.Errorf("the upgrade left a %s.dpkg-* next to it", conffile)
	}
	if got := strings.TrimSpace(r.MustRun(t, "chroot", r.Dir, "/usr/bin/otelcol-ernic", "--version")); got != "otelcol-ernic version "+semver {
		t.Errorf("installed otelcol-ernic --version: %q, want %q", got, "otelcol-ernic version "+semver)
	}

	runInstalled(t, r)
	verifyInstalledUnit(t, r)

	// What the service's StateDirectory= with DynamicUser= makes at its start.
	r.MustRun(t, "mkdir", "-p", r.Path(privateDir))
	r.MustRun(t, "touch", r.Path(privateDir+"/queue"))
	r.MustRun(t, "ln", "-s", "private/otelcol-ernic", r.Path(stateDir))

	// Remove: the binary goes; the conffile, the state and the enablement stay.
	t.Logf("dpkg -r:\n%s", r.MustRun(t, "dpkg", "--root="+r.Dir, "-r", "otelcol-ernic"))
	if got := status(t, r); got != "rc "+debVersion {
		t.Errorf("after dpkg -r: %q, want rc %s", got, debVersion)
	}
	for path, want := range map[string]bool{
		"/usr/bin/otelcol-ernic": false, "/usr/lib/systemd/system/" + unit: false,
		conffile: true, privateDir + "/queue": true, stateDir: true, wantsLink: true,
	} {
		if got := r.Exists(t, path); got != want {
			t.Errorf("after dpkg -r: %s exists %v, want %v", path, got, want)
		}
	}

	// Purge: nothing of it is left.
	t.Logf("dpkg -P:\n%s", r.MustRun(t, "dpkg", "--root="+r.Dir, "-P", "otelcol-ernic"))
	if got := status(t, r); got != "not installed" && !strings.HasPrefix(got, "pn") {
		t.Errorf("after dpkg -P: %q", got)
	}
	for _, path := range []string{conffile, "/etc/otelcol-ernic", stateDir, privateDir, wantsLink,
		"/var/lib/systemd/deb-systemd-helper-enabled/" + unit + ".dsh-also"} {
		if r.Exists(t, path) {
			t.Errorf("after dpkg -P: %s is still there", path)
		}
	}
}

// writeInRoot writes text to path in the root.
func writeInRoot(t *testing.T, r *throwawayRoot, path, text string) {
	t.Helper()
	cmd := r.Command("sh", "-c", `cat >"$1"`, "sh", r.Path(path))
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write %s: %v\n%s", path, err, out)
	}
}

// runInstalled runs the installed collector chrooted into the root with the
// installed configuration, on a simulated run directory mounted at its
// default place, /run/rocm-ernic, and scrapes ernic_ series from it.
func runInstalled(t *testing.T, r *throwawayRoot) {
	t.Helper()
	runDir := t.TempDir()
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 3, QPs: 2, Seed: 1})
	r.MustRun(t, "mkdir", "-p", r.Path("/run/rocm-ernic"))
	r.MustRun(t, "mount", "--bind", runDir, r.Path("/run/rocm-ernic"))
	port := harness.FreePort(t)
	cmd := r.Command("chroot", r.Dir, "/usr/bin/otelcol-ernic", "--config", conffile)
	p := harness.Start(t, harness.Launch{
		Name: "installed collector", Path: cmd.Path, Args: cmd.Args[1:],
		Env: []string{
			fmt.Sprintf("ERNIC_EXPORTER_PORT=%d", port),
			fmt.Sprintf("ERNIC_HEALTH_PORT=%d", harness.FreePort(t)),
		},
		StopWait: 15 * time.Second, KilledIsError: true,
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		families, err := harness.Scrape(ctx, url)
		cancel()
		up := 0
		if f := families["ernic_instance_up"]; f != nil {
			for _, m := range f.GetMetric() {
				if m.GetGauge().GetValue() == 1 {
					up++
				}
			}
		}
		if err == nil && up == 3 && families["ernic_rdma_bytes_sent_total"] != nil {
			t.Logf("installed collector: %d families, ernic_instance_up 1 for %d instances", len(families), up)
			return
		}
		if !p.Running() || time.Now().After(deadline) {
			t.Fatalf("no ernic_instance_up 1 for the 3 simulated instances at %s (%v, %d up); log:\n%s", url, err, up, p.Log.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// verifyInstalledUnit: `systemd-analyze verify` finds nothing to report in
// the installed unit, offline in the root (as test/deploy does for `make
// install`): keys, the ExecStart binary, the dependencies.
func verifyInstalledUnit(t *testing.T, r *throwawayRoot) {
	t.Helper()
	harness.Tool(t, "systemd-analyze", "apt-get install systemd")
	cmd := r.Command("systemd-analyze", "verify", "--man=no", "--generators=no", "--root="+r.Dir, unit)
	cmd.Env = append(os.Environ(), "SYSTEMD_PAGER=cat", "SYSTEMD_COLORS=0", "LC_ALL=C.UTF-8")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("systemd-analyze verify --root=<root> %s: %v\n%s", unit, err, out)
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// Package deploy tests the systemd installation of otelcol-ernic (deploy/):
// `make install` into a temporary DESTDIR, the installed unit checked by
// `systemd-analyze verify` in that tree, and its hardening scored by
// `systemd-analyze security --offline=true`.
//
// The e2e build tag keeps them out of `go test ./...`: `make install` builds
// the collector first. They need make and systemd-analyze (systemd need not
// be running).
package deploy

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

const (
	unitName = "otelcol-ernic.service"
	// maxExposure is the highest overall exposure accepted from `systemd-analyze
	// security`: 0.0 is fully locked down, 10.0 fully exposed; up to 2.0 it
	// rates the unit "SAFE" or "OK". What keeps it above 0 is listed in
	// deploy/README.md; it is 1.2, with the credentials drop-in too.
	maxExposure = 1.5

	// The default install layout (Makefile's PREFIX, UNITDIR and CONFDIR).
	binPath    = "usr/local/bin/otelcol-ernic"
	unitPath   = "etc/systemd/system/" + unitName
	configPath = "etc/otelcol-ernic/config.yaml"
	// credentialsDir holds the files the credentials drop-in loads.
	credentialsDir = "etc/otelcol-ernic/credentials"
	dropInPath     = "etc/systemd/system/otelcol-ernic.service.d/credentials.conf"
)

// makeInstall runs `make install DESTDIR=destdir` in the repository root and
// returns its output. The install layout variables and the make flags of an
// enclosing make (jobserver descriptors that go test does not pass on) are
// removed from the environment, so the Makefile's defaults are tested.
func makeInstall(t *testing.T, destdir string, vars ...string) string {
	t.Helper()
	mk := harness.Tool(t, "make", "apt-get install make")
	cmd := exec.Command(mk, append([]string{"--no-print-directory", "install", "DESTDIR=" + destdir}, vars...)...)
	cmd.Dir = harness.RepoRoot(t)
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES",
			"DESTDIR", "PREFIX", "BINDIR", "UNITDIR", "CONFDIR", "DEFAULT_CONFIG":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install DESTDIR=%s %s: %v\n%s", destdir, strings.Join(vars, " "), err, out)
	}
	t.Logf("make install DESTDIR=%s %s(%s)", destdir, strings.Join(append(vars, ""), " "), time.Since(start).Round(time.Millisecond))
	return string(out)
}

// installed runs `make install` into a new temporary root and returns it.
func installed(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	makeInstall(t, root)
	return root
}

func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("not installed: %v", err)
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		t.Errorf("%s: %s, want a regular file or directory", path, fi.Mode())
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %04o, want %04o", path, got, want)
	}
}

func checkSameContent(t *testing.T, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s differs from %s", got, want)
	}
}

// TestInstall: make install puts the binary, the unit and the default config
// in place with the right modes, and a second run keeps an edited config while
// it replaces the binary and the unit.
func TestInstall(t *testing.T) {
	repo := harness.RepoRoot(t)
	root := installed(t)

	checkMode(t, filepath.Join(root, binPath), 0o755)
	checkMode(t, filepath.Join(root, unitPath), 0o644)
	checkMode(t, filepath.Join(root, configPath), 0o644)
	checkMode(t, filepath.Join(root, filepath.Dir(configPath)), 0o755)
	checkMode(t, filepath.Join(root, credentialsDir), 0o700)
	checkSameContent(t, filepath.Join(root, binPath), filepath.Join(repo, "build/otelcol-ernic/otelcol-ernic"))
	// With the default paths the unit is installed as it is in deploy/.
	checkSameContent(t, filepath.Join(root, unitPath), filepath.Join(repo, "deploy", unitName))
	checkSameContent(t, filepath.Join(root, configPath), filepath.Join(repo, "config/local.yaml"))

	// The default config is one the installed collector accepts.
	validate := exec.Command(filepath.Join(root, binPath), "validate", "--config", filepath.Join(root, configPath))
	if out, err := validate.CombinedOutput(); err != nil {
		t.Errorf("otelcol-ernic validate --config %s: %v\n%s", configPath, err, out)
	}

	// An administrator's config survives a re-install (an upgrade); the binary
	// and the unit are replaced.
	edited := []byte("# edited by the administrator\n")
	if err := os.WriteFile(filepath.Join(root, configPath), edited, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, configPath), 0o640); err != nil {
		t.Fatal(err)
	}
	for path, old := range map[string]string{unitPath: "[Unit]\n", binPath: "old"} {
		if err := os.WriteFile(filepath.Join(root, path), []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, path), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := makeInstall(t, root)
	if got, err := os.ReadFile(filepath.Join(root, configPath)); err != nil || !bytes.Equal(got, edited) {
		t.Errorf("re-install overwrote the existing config: %q (%v)\n%s", got, err, out)
	}
	checkMode(t, filepath.Join(root, configPath), 0o640)
	if !strings.Contains(out, "keeping the existing") {
		t.Errorf("re-install does not say that it kept the config:\n%s", out)
	}
	checkMode(t, filepath.Join(root, binPath), 0o755)
	checkMode(t, filepath.Join(root, unitPath), 0o644)
	checkSameContent(t, filepath.Join(root, binPath), filepath.Join(repo, "build/otelcol-ernic/otelcol-ernic"))
	checkSameContent(t, filepath.Join(root, unitPath), filepath.Join(repo, "deploy", unitName))
}

// TestInstallPaths: with PREFIX and CONFDIR moved, the files go there and the
// installed unit points at them.
func TestInstallPaths(t *testing.T) {
	root := t.TempDir()
	makeInstall(t, root, "PREFIX=/opt/otelcol", "CONFDIR=/etc/otelcol")
	checkMode(t, filepath.Join(root, "opt/otelcol/bin/otelcol-ernic"), 0o755)
	checkMode(t, filepath.Join(root, "etc/otelcol/config.yaml"), 0o644)
	unit, err := os.ReadFile(filepath.Join(root, unitPath))
	if err != nil {
		t.Fatal(err)
	}
	const want = "\nExecStart=/opt/otelcol/bin/otelcol-ernic --config /etc/otelcol/config.yaml\n"
	if !bytes.Contains(unit, []byte(want)) {
		t.Errorf("installed unit has no %q:\n%s", strings.TrimSpace(want), unit)
	}
	if bytes.Contains(unit, []byte("/usr/local/bin")) || bytes.Contains(unit, []byte("/etc/otelcol-ernic")) {
		t.Errorf("installed unit still names a default path:\n%s", unit)
	}
}

// verifyRoot installs into a temporary root and adds the host's systemd units
// (sysinit.target, basic.target, network-online.target, ...), which
// `systemd-analyze verify --root` resolves the unit's dependencies against.
func verifyRoot(t *testing.T) string {
	t.Helper()
	root := installed(t)
	cp := harness.Tool(t, "cp", "coreutils")
	var src string
	for _, d := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if _, err := os.Stat(filepath.Join(d, "sysinit.target")); err == nil {
			src = d
			break
		}
	}
	if src == "" {
		t.Fatal("systemd's unit directory (/usr/lib/systemd/system with sysinit.target) not found: apt-get install systemd")
	}
	dst := filepath.Join(root, "usr/lib/systemd")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cp, "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
	return root
}

// dropInBlocks are the blocks of deploy/otelcol-ernic.service.d/credentials.conf,
// by the start of their heading line.
var dropInBlocks = []string{harness.PushCredentials, harness.PullCredentials}

// installDropIn installs the credentials drop-in into root with the
// settings of the block whose heading starts with heading on, and the
// binary's path the one `make install` installs, as its comment says.
func installDropIn(t *testing.T, root, heading string) {
	t.Helper()
	path := filepath.Join(root, dropInPath)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, harness.CredentialsDropIn(t, heading, "/"+binPath), 0o644); err != nil {
		t.Fatal(err)
	}
}

// analyze runs systemd-analyze and returns its combined output and error.
func analyze(t *testing.T, args ...string) (string, error) {
	t.Helper()
	sa := harness.Tool(t, "systemd-analyze", "apt-get install systemd")
	cmd := exec.Command(sa, args...)
	// No pager, no colours, no hints beyond the findings.
	cmd.Env = append(os.Environ(), "SYSTEMD_PAGER=cat", "SYSTEMD_COLORS=0", "LC_ALL=C.UTF-8")
	out, err := cmd.CombinedOutput()
	t.Logf("systemd-analyze %s", strings.Join(args, " "))
	return string(out), err
}

// TestUnitVerify: `systemd-analyze verify` finds nothing to report in the
// installed unit: every key known and well-formed, the ExecStart binary
// present and executable, the dependencies loadable. systemd is not PID 1
// here, so the check runs offline on the installed tree (--root) without
// generators or man-page look-ups.
func TestUnitVerify(t *testing.T) {
	root := verifyRoot(t)
	args := []string{"verify", "--man=no", "--generators=no", "--root=" + root, unitName}
	out, err := analyze(t, args...)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("systemd-analyze %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// With each block of the credentials drop-in on, and then off again.
	for _, block := range dropInBlocks {
		installDropIn(t, root, block)
		if out, err := analyze(t, args...); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("systemd-analyze %s with credentials.conf's %q block: %v\n%s", strings.Join(args, " "), block, err, out)
		}
	}
	if err := os.Remove(filepath.Join(root, dropInPath)); err != nil {
		t.Fatal(err)
	}

	// The same check on a broken copy must complain: verify exits 0 on unknown
	// keys and unparsable values and only prints them, which is why any output
	// above fails the test.
	unit := filepath.Join(root, unitPath)
	good, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(good, []byte("\nRestartSec=5s\n"), []byte("\nRestartSec=five seconds\nProtectClok=yes\n"), 1)
	if bytes.Equal(bad, good) {
		t.Fatal("RestartSec=5s not found in the unit")
	}
	if err := os.WriteFile(unit, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = analyze(t, args...)
	for _, want := range []string{"ProtectClok", "five seconds"} {
		if !strings.Contains(out, want) {
			t.Errorf("verify of a unit with %q reported nothing about it:\n%s", want, out)
		}
	}
}

var overallRE = regexp.MustCompile(`Overall exposure level for ` + regexp.QuoteMeta(unitName) + `: (\d+\.\d+) (\w+)`)

// TestUnitSecurity: `systemd-analyze security --offline=true` rates the
// installed unit at most maxExposure, alone and with each block of the
// credentials drop-in on.
func TestUnitSecurity(t *testing.T) {
	root := installed(t)
	checkExposure(t, root, "")
	for _, block := range dropInBlocks {
		installDropIn(t, root, block)
		checkExposure(t, root, "with credentials.conf's "+block)
	}
}

func checkExposure(t *testing.T, root, with string) {
	t.Helper()
	args := []string{"security", "--offline=true", "--no-pager", "--root=" + root, unitName}
	out, err := analyze(t, args...)
	if err != nil {
		t.Fatalf("systemd-analyze %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := overallRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no overall exposure level in the output of systemd-analyze %s:\n%s", strings.Join(args, " "), out)
	}
	score, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	// What the score is still charged for (the ✗ lines).
	var open []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "✗" {
			open = append(open, fmt.Sprintf("%s (%s)", f[1], f[len(f)-1]))
		}
	}
	t.Logf("overall exposure level of %s %s: %.1f %s; not set: %s", unitName, with, score, m[2], strings.Join(open, ", "))
	if score > maxExposure {
		t.Errorf("overall exposure %s %.1f %s is above %.1f:\n%s", with, score, m[2], maxExposure, out)
	}
}

// TestUnitKeepsProcReadable: the receiver reads /proc/stat (boot time) and
// /proc/<pid>/stat of rocm-ernic's root-owned server processes. ProcSubset=pid
// hides the first (the collector then refuses to start) and ProtectProc=
// anything but default hides the second (every instance then reads as down).
// Both would lower the exposure score, so guard against them here.
func TestUnitKeepsProcReadable(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "deploy", unitName))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(unit), "\n") {
		line = strings.TrimSpace(line)
		for _, key := range []string{"ProtectProc=", "ProcSubset="} {
			if strings.HasPrefix(line, key) && line != "ProtectProc=default" && line != "ProcSubset=all" {
				t.Errorf("%s: %q hides /proc files the receiver reads", unitName, line)
			}
		}
	}
}

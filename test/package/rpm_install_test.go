// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package pkgtest

import (
	"runtime"
	"strings"
	"testing"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestRPMInstallUpgradeErase: the host architecture's .rpm installed with
// rpm --root into a throwaway root (its scriptlets run there; systemctl
// works offline on the root's unit files), over an older version, and
// erased. Debian's rpm stands in for an RPM distribution's: the files,
// the config's noreplace and the scriptlets are what is checked, not
// dependencies (--nodeps: the root's database is empty).
func TestRPMInstallUpgradeErase(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("no package for %s", runtime.GOARCH)
	}
	harness.Tool(t, "rpm", "apt-get install rpm")
	r := newThrowawayRoot(t)
	_, version := packages(t)
	pkg := rpmPath(t, runtime.GOARCH)
	_, old := repackage(t, runtime.GOARCH, "0.0.1-test.1")
	rpm := func(args ...string) string {
		t.Helper()
		return r.MustRun(t, "rpm", append([]string{"--root=" + r.Dir}, args...)...)
	}
	query := func() string {
		t.Helper()
		out, err := r.Run("rpm", "--root="+r.Dir, "-q", "--qf", "%{VERSION}-%{RELEASE}", "otelcol-ernic")
		if err != nil {
			return "not installed"
		}
		return strings.TrimSpace(out)
	}
	enabled := func() bool {
		t.Helper()
		return r.Exists(t, wantsLink)
	}

	rpm("--initdb")
	rpm("-i", "--nodeps", old)
	if got := query(); got != "0.0.1~test.1-1" {
		t.Fatalf("after rpm -i: %q", got)
	}
	// %post: systemctl preset (Debian's policy enables everything).
	if !enabled() {
		t.Error("after rpm -i: the unit is not enabled by its preset")
	}

	edited := r.ReadFile(t, conffile) + "# edited by the administrator\n"
	writeInRoot(t, r, conffile, edited)
	t.Logf("rpm -U:\n%s", rpm("-U", "--nodeps", pkg))
	if got := query(); got != version {
		t.Fatalf("after rpm -U: %q, want %s", got, version)
	}
	if got := r.ReadFile(t, conffile); got != edited {
		t.Errorf("rpm -U replaced the edited %s", conffile)
	}
	if r.Exists(t, conffile+".rpmnew") {
		t.Errorf("rpm -U wrote %s.rpmnew for an unchanged config", conffile)
	}
	// %preun of the old package on an upgrade does not disable the unit.
	if !enabled() {
		t.Error("after rpm -U: the unit is no longer enabled")
	}

	r.MustRun(t, "mkdir", "-p", r.Path(stateDir))
	t.Logf("rpm -e:\n%s", rpm("-e", "otelcol-ernic"))
	if got := query(); got != "not installed" {
		t.Errorf("after rpm -e: %q", got)
	}
	for path, want := range map[string]bool{
		"/usr/bin/otelcol-ernic": false, "/usr/lib/systemd/system/" + unit: false, wantsLink: false,
		conffile: false, conffile + ".rpmsave": true, stateDir: true,
	} {
		if got := r.Exists(t, path); got != want {
			t.Errorf("after rpm -e: %s exists %v, want %v", path, got, want)
		}
	}
}

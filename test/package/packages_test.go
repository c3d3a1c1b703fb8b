// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// Package pkgtest tests the otelcol-ernic .deb and .rpm (`make package`,
// packaging/): their contents, control data and maintainer scripts against
// the golden files in testdata/ (-update rewrites them), lintian, a real
// dpkg install, upgrade, removal and purge in a throwaway root, with the
// installed collector run on a simulated run directory, and the .rpm's
// install, upgrade and erase there with rpm.
//
// The tests are behind the e2e build tag, like test/deploy: `make package`
// builds the collector first. They need dpkg-deb, lintian and rpm (`make
// test-deps`); the install tests need root and skip without it.
package pkgtest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// archs are the architectures `make package` builds (PACKAGE_ARCHS).
var archs = []string{"amd64", "arm64"}

var (
	buildOnce sync.Once
	buildErr  error
	version   string // scripts/version.sh: the semantic version
	debVer    string // its Debian form, with the package's revision
)

// packages runs `make package` in the repository root once per test binary
// and returns the version it packaged and the packages' version (Debian's
// form, with the revision; the RPM version-release is the same).
func packages(t *testing.T) (semver, deb string) {
	t.Helper()
	buildOnce.Do(func() {
		root := harness.RepoRoot(t)
		var out []byte
		if out, buildErr = exec.Command(filepath.Join(root, "scripts/version.sh")).Output(); buildErr != nil {
			return
		}
		version = strings.TrimSpace(string(out))
		if out, buildErr = exec.Command(filepath.Join(root, "scripts/version.sh"), "--deb").Output(); buildErr != nil {
			return
		}
		nfpmConfig, err := os.ReadFile(filepath.Join(root, "packaging/nfpm.yaml"))
		if err != nil {
			buildErr = err
			return
		}
		m := regexp.MustCompile(`(?m)^release: "(\d+)"$`).FindSubmatch(nfpmConfig)
		if m == nil {
			buildErr = fmt.Errorf("packaging/nfpm.yaml has no release")
			return
		}
		// The Debian revision and RPM release follow the version.
		debVer = strings.TrimSpace(string(out)) + "-" + string(m[1])
		start := time.Now()
		cmd := exec.Command("make", "--no-print-directory", "package")
		cmd.Dir = root
		cmd.Env = makeEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &cmdError{"make package", err, string(out)}
			return
		}
		t.Logf("make package: %s (%s)", version, time.Since(start).Round(time.Second))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return version, debVer
}

// makeEnv is the environment without an enclosing make's flags and
// variables that would change what `make package` builds.
func makeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "VERSION", "PACKAGE_ARCHS", "DIST":
			continue
		}
		env = append(env, kv)
	}
	return env
}

type cmdError struct {
	cmd string
	err error
	out string
}

func (e *cmdError) Error() string { return e.cmd + ": " + e.err.Error() + "\n" + e.out }

// debPath is the .deb of arch that `make package` wrote.
func debPath(t *testing.T, arch string) string {
	t.Helper()
	_, deb := packages(t)
	return filepath.Join(harness.RepoRoot(t), "build/dist", "otelcol-ernic_"+deb+"_"+arch+".deb")
}

// rpmArch is RPM's name of a Go architecture.
var rpmArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}

// rpmPath is the .rpm of arch that `make package` wrote.
func rpmPath(t *testing.T, arch string) string {
	t.Helper()
	_, deb := packages(t)
	return filepath.Join(harness.RepoRoot(t), "build/dist", "otelcol-ernic-"+deb+"."+rpmArch[arch]+".rpm")
}

// repackage makes the .deb and .rpm of arch again with another version into
// a temporary directory (scripts/package.sh, as `make package` does, on the
// binaries it built) and returns their paths.
func repackage(t *testing.T, arch, semver string) (deb, rpm string) {
	t.Helper()
	packages(t)
	root := harness.RepoRoot(t)
	dist := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "scripts/package.sh"), arch)
	cmd.Dir = root
	cmd.Env = append(makeEnv(), "VERSION="+semver, "DIST="+dist, "NFPM="+filepath.Join(root, "bin/nfpm"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/package.sh %s with VERSION=%s: %v\n%s", arch, semver, err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dist, "*_"+arch+".deb"))
	rpms, _ := filepath.Glob(filepath.Join(dist, "*."+rpmArch[arch]+".rpm"))
	if len(debs) != 1 || len(rpms) != 1 {
		t.Fatalf("scripts/package.sh %s wrote %v and %v, want one .deb and one .rpm", arch, debs, rpms)
	}
	return debs[0], rpms[0]
}

// output runs name with args and returns its stdout, failing the test with
// its stderr on an error.
func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -tags e2e ./test/package -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the package holds (-update rewrites it; review the diff):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(same lines, another order)"
	}
	return b.String()
}

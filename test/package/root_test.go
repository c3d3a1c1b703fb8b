// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package pkgtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// throwawayRoot is a copy-on-write copy of this machine's root file system
// (harness.OverlayRoot of /). dpkg --root installs into it and chroots into
// it for the maintainer scripts, against the host's own dpkg database and
// tools; nothing reaches the host.
type throwawayRoot struct {
	*harness.OverlayRoot
}

func newThrowawayRoot(t *testing.T) *throwawayRoot {
	t.Helper()
	harness.RequireRoot(t, "install with dpkg --root and mount in a mount namespace")
	r := &throwawayRoot{harness.NewOverlayRoot(t, "/")}
	r.MustRun(t, "mount", "--rbind", "/dev", filepath.Join(r.Dir, "dev"))
	r.MustRun(t, "mount", "-t", "proc", "proc", filepath.Join(r.Dir, "proc"))
	// /run as on a machine that has not booted systemd: the maintainer
	// scripts then enable the unit but start nothing.
	r.MustRun(t, "mount", "-t", "tmpfs", "tmpfs", filepath.Join(r.Dir, "run"))
	return r
}

// Run runs name with args in the namespace and returns its combined output.
func (r *throwawayRoot) Run(name string, args ...string) (string, error) {
	cmd := r.Command(name, args...)
	cmd.Stdin = nil
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// MustRun is Run, failing the test on an error.
func (r *throwawayRoot) MustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := r.Run(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// Path is the namespace's path of path (absolute, in the root).
func (r *throwawayRoot) Path(path string) string { return filepath.Join(r.Dir, path) }

// Exists tells whether path (in the root) exists, without following a
// final symbolic link.
func (r *throwawayRoot) Exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := r.Run("test", "-e", r.Path(path), "-o", "-L", r.Path(path))
	return err == nil
}

// ReadFile returns the content of path in the root.
func (r *throwawayRoot) ReadFile(t *testing.T, path string) string {
	t.Helper()
	return r.MustRun(t, "cat", r.Path(path))
}

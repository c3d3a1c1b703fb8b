// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package pkgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// throwawayRoot is a copy-on-write copy of this machine's root file system
// (an overlay with / as its lower layer and a tmpfs as its upper one) in a
// mount namespace of its own, held open by a sleeping process. dpkg --root
// installs into it and chroots into it for the maintainer scripts, against
// the host's own dpkg database and tools; nothing reaches the host, and it
// all goes when the holder is killed at the end of the test.
type throwawayRoot struct {
	// Dir is the root's path inside the namespace.
	Dir    string
	holder *exec.Cmd
}

func newThrowawayRoot(t *testing.T) *throwawayRoot {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: dpkg --root, mounts in a mount namespace (CI runs as root)")
	}
	unshare := harness.Tool(t, "unshare", "apt-get install util-linux")
	harness.Tool(t, "nsenter", "apt-get install util-linux")
	base := t.TempDir()
	r := &throwawayRoot{Dir: filepath.Join(base, "root")}
	r.holder = exec.Command(unshare, "--mount", "--propagation", "private", "sleep", "infinity")
	if err := r.holder.Start(); err != nil {
		t.Fatalf("unshare --mount: %v", err)
	}
	t.Cleanup(func() {
		_ = r.holder.Process.Kill()
		_ = r.holder.Wait()
	})
	// unshare has made the namespace once it has exec'd sleep.
	deadline := time.Now().Add(10 * time.Second)
	for {
		self, _ := os.Readlink("/proc/self/ns/mnt")
		held, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(r.holder.Process.Pid), "ns/mnt"))
		if err == nil && held != self {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("unshare --mount: no new mount namespace after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	layers := filepath.Join(base, "layers")
	for _, d := range []string{layers, r.Dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The upper layer must not be on an overlay itself: a tmpfs of its own.
	r.MustRun(t, "mount", "-t", "tmpfs", "tmpfs", layers)
	r.MustRun(t, "mkdir", filepath.Join(layers, "upper"), filepath.Join(layers, "work"))
	r.MustRun(t, "mount", "-t", "overlay", "overlay", "-o",
		"lowerdir=/,upperdir="+filepath.Join(layers, "upper")+",workdir="+filepath.Join(layers, "work"), r.Dir)
	r.MustRun(t, "mount", "--rbind", "/dev", filepath.Join(r.Dir, "dev"))
	r.MustRun(t, "mount", "-t", "proc", "proc", filepath.Join(r.Dir, "proc"))
	// /run as on a machine that has not booted systemd: the maintainer
	// scripts then enable the unit but start nothing.
	r.MustRun(t, "mount", "-t", "tmpfs", "tmpfs", filepath.Join(r.Dir, "run"))
	return r
}

// Command returns name with args run inside the root's mount namespace
// (paths are the namespace's: Dir/... for files in the root).
func (r *throwawayRoot) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--target", strconv.Itoa(r.holder.Process.Pid), "--mount", "--", name}, args...)...)
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

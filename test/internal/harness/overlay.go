// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// OverlayRoot is a copy-on-write copy of a directory tree (an overlay with
// the tree as its lower layer and a tmpfs as its upper one) in a mount
// namespace of its own, held open by a sleeping process: nothing written to
// the copy reaches the tree, and all of it goes when the holder is killed at
// the end of the test. Making one needs root (RequireRoot).
type OverlayRoot struct {
	// Dir is the copy's path inside the namespace.
	Dir    string
	holder *exec.Cmd
}

// NewOverlayRoot mounts a copy of lower (an absolute path; "/" copies this
// machine's root) in a new mount namespace.
func NewOverlayRoot(t testing.TB, lower string) *OverlayRoot {
	t.Helper()
	unshare := Tool(t, "unshare", "apt-get install util-linux")
	Tool(t, "nsenter", "apt-get install util-linux")
	base := t.TempDir()
	r := &OverlayRoot{Dir: filepath.Join(base, "root")}
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
		held, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(r.Pid()), "ns/mnt"))
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
		"lowerdir="+lower+",upperdir="+filepath.Join(layers, "upper")+",workdir="+filepath.Join(layers, "work"), r.Dir)
	return r
}

// Pid is the process ID of the namespace's holder.
func (r *OverlayRoot) Pid() int { return r.holder.Process.Pid }

// Command returns name with args run inside the namespace (paths are the
// namespace's: Dir/... for files of the copy).
func (r *OverlayRoot) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--target", strconv.Itoa(r.Pid()), "--mount", "--", name}, args...)...)
}

// MustRun runs name with args in the namespace and returns its combined
// output, failing the test on an error.
func (r *OverlayRoot) MustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := r.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package switchtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// container is a Debian root booted with systemd-nspawn --boot: a
// copy-on-write copy (harness.OverlayRoot) of the cached root that `make
// debian-root` made, so that the cache stays as debootstrap left it and the
// copy goes when the test ends. The container shares the host's network:
// its services listen on the host's loopback.
type container struct {
	// host is the copy's mount namespace, outside the container: its Dir
	// is the root's path there.
	host   *harness.OverlayRoot
	Dir    string
	nspawn *harness.Process
	// init is the container's PID 1 (systemd), as the host sees it.
	init int
}

// newContainerRoot makes the copy of base (not booted yet): files can be
// put into it with WriteFile and Run before Boot.
func newContainerRoot(t *testing.T, base string) *container {
	t.Helper()
	host := harness.NewOverlayRoot(t, base)
	c := &container{host: host, Dir: host.Dir}
	// systemd-nspawn keeps state in /run/systemd/nspawn: a tmpfs of the
	// namespace, so that nothing of it stays on the host.
	host.MustRun(t, "mkdir", "-p", "/run/systemd/nspawn")
	host.MustRun(t, "mount", "-t", "tmpfs", "tmpfs", "/run/systemd/nspawn")
	return c
}

// path is the host's path of path in the root, through the holder's view
// of its mount namespace (/proc/<pid>/root).
func (c *container) path(path string) string {
	return filepath.Join("/proc", strconv.Itoa(c.host.Pid()), "root", c.Dir, path)
}

// WriteFile writes data to path in the root, with its directories.
func (c *container) WriteFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	p := c.path(path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// CopyFile copies the host's file src to path in the root.
func (c *container) CopyFile(t *testing.T, src, path string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteFile(t, path, b, mode)
}

// Chroot runs name with args chrooted into the root before it is booted
// (the offline work of a package's maintainer scripts).
func (c *container) Chroot(t *testing.T, name string, args ...string) string {
	t.Helper()
	return c.host.MustRun(t, "chroot", append([]string{c.Dir, name}, args...)...)
}

// Boot boots the root with systemd-nspawn and waits until systemd reports
// the system running (within bootWait). The container is powered off
// when the test ends; its console output is printed when the test failed.
func (c *container) Boot(t *testing.T, bootWait time.Duration) {
	t.Helper()
	harness.Tool(t, "systemd-nspawn", "apt-get install systemd-container")
	cmd := c.host.Command("systemd-nspawn", "--boot", "--directory="+c.Dir,
		"--machine=switch-test",
		// No systemd on the host to register with, or to make a scope
		// unit: the container runs in the test's own cgroup.
		"--register=no", "--keep-unit",
		// Nothing of the host's journal, and the console read, not
		// interactive (no terminal here).
		"--link-journal=no", "--console=read-only",
	)
	c.nspawn = harness.Start(t, harness.Launch{
		Name: "systemd-nspawn", Path: cmd.Path, Args: cmd.Args[1:],
		// SIGTERM makes nspawn send SIGRTMIN+3 to the container's
		// systemd: an orderly power-off.
		StopWait: 30 * time.Second, KilledIsError: true,
	})
	deadline := time.Now().Add(bootWait)
	for c.init == 0 {
		if !c.nspawn.Running() {
			t.Fatalf("systemd-nspawn exited: %v\n%s", c.nspawn.Err(), c.nspawn.Log.String())
		}
		c.init = initPID(c.nspawn.Cmd.Process.Pid)
		if c.init == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no systemd in the container within %v:\n%s", bootWait, c.nspawn.Log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// "running"; before that, no bus to connect to or "offline" until
	// systemd's private socket is there, then "initializing" or "starting"
	// (--wait waits those out). A final state other than "running"
	// ("degraded": a unit failed) or the deadline is a failure to boot.
	state := ""
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		out, _ := c.Run(ctx, "systemctl", "is-system-running", "--wait")
		cancel()
		state = strings.TrimSpace(out)
		final := state == "running" || state == "degraded" || state == "maintenance" || state == "stopping"
		if final || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if state != "running" {
		failed, _ := c.Run(context.Background(), "systemctl", "--failed", "--no-legend")
		t.Fatalf("the container's systemd is %q after boot, not running; failed units:\n%s\nconsole:\n%s",
			state, failed, c.nspawn.Log.String())
	}
}

// initPID is the pid of the child of the nspawn process named systemd: the
// container's PID 1.
func initPID(nspawn int) int {
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", nspawn, nspawn))
	if err != nil {
		return 0
	}
	for _, f := range strings.Fields(string(children)) {
		comm, err := os.ReadFile("/proc/" + f + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == "systemd" {
			pid, _ := strconv.Atoi(f)
			return pid
		}
	}
	return 0
}

// Command is name with args run inside the booted container (all its
// namespaces, its root), as its root user.
func (c *container) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--target", strconv.Itoa(c.init), "--all", "--", name}, args...)...)
	cmd.Env = append(harness.CleanEnv(), "SYSTEMD_PAGER=cat", "SYSTEMD_COLORS=0", "LC_ALL=C.UTF-8",
		"DEBIAN_FRONTEND=noninteractive", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.WaitDelay = 5 * time.Second
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
	return cmd
}

// Run runs name with args in the container and returns its combined output.
func (c *container) Run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := c.Command(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// MustRun is Run within a minute, failing the test on an error.
func (c *container) MustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.Run(ctx, name, args...)
	if err != nil {
		t.Fatalf("in the container: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// UnitState is systemctl is-active and is-enabled of unit, e.g.
// "active enabled".
func (c *container) UnitState(t *testing.T, unit string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	active, _ := c.Run(ctx, "systemctl", "is-active", unit)
	enabled, _ := c.Run(ctx, "systemctl", "is-enabled", unit)
	return strings.TrimSpace(active) + " " + strings.TrimSpace(enabled)
}

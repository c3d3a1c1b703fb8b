// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Crashes, pid reuse and restarts.

// crash kills in's server (no shutdown write; manifest and stats file stay)
// and, for pid-reuse, gives its pid to an unrelated process; after the hold
// a new server starts.
func (c *Chaos) crash(ctx context.Context, in *inst, kind string) {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		delete(c.busy, in.ID)
		s.mu.Unlock()
		return
	}
	pid := in.PID
	in.child.kill()
	in.child = nil
	in.hold = &hold{pid: in.PID, reason: "killed"}
	// Every other pid-reuse, the unrelated process has a command name of
	// its own (ChaosDecoyComm); the others, the server's.
	decoyExe, comm := "", "the server's"
	if kind == ChaosPIDReuse {
		if c.pidReuses%2 == 1 {
			decoyExe, comm = c.decoyExe(), ChaosDecoyComm
		}
		c.pidReuses++
	}
	if kind == ChaosCrash {
		c.fault(kind, in, "server pid %d killed; the manifest keeps it, the stats file stays", pid)
	}
	s.mu.Unlock()

	if kind == ChaosPIDReuse {
		sleepCtx(ctx, c.hold()/5) // the dead pid is seen for a scrape or so
		// Outside the lock: the attempts fork and reap processes, which
		// takes long on a busy machine, and the ticks must go on.
		d, same, err := startChildWithPID(pid, decoyExe)
		s.mu.Lock()
		if s.stopped {
			d.kill()
		} else {
			switch {
			case err != nil:
				s.logf("error starting the unrelated process of pid-reuse: %v", err)
				c.fault(kind, in, "server pid %d killed; no unrelated process could be started: %v", pid, err)
			case same:
				c.decoys[in.ID] = d
				c.fault(kind, in, "server pid %d killed; an unrelated process (command name: %s) now has pid %d (ns_last_pid); the manifest and the stats file stay", pid, comm, pid)
			default:
				c.decoys[in.ID] = d
				in.PID = d.cmd.Process.Pid
				in.hold.pid = in.PID
				_ = s.writeManifest()
				c.fault(kind, in, "server pid %d killed; the pid could not be reused (not root or taken), so the manifest entry now points at the unrelated process %d (command name: %s); the stats file stays", pid, in.PID, comm)
			}
		}
		s.mu.Unlock()
	}

	if kind == ChaosPIDReuse {
		sleepCtx(ctx, c.checkedHold())
	} else {
		sleepCtx(ctx, c.hold())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(c.busy, in.ID)
	if s.stopped {
		return
	}
	c.faultEnd(kind, in)
	cause := chaosRestartCrash
	if kind == ChaosPIDReuse {
		cause = chaosRestartPIDReuse
	}
	c.restartLocked(in, cause, false)
}

// decoyExe returns a symbolic link named ChaosDecoyComm to this binary, in
// the directory outside the run directory ("" when it cannot be made: the
// decoy then has the server's command name).
func (c *Chaos) decoyExe() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	link := filepath.Join(c.outside, ChaosDecoyComm)
	if _, err := os.Lstat(link); err != nil {
		if err := os.Symlink(exe, link); err != nil {
			return ""
		}
	}
	return link
}

// startChildWithPID starts an unrelated process (from exe, see
// startChildExe) with pid when it can (root, /proc/sys/kernel/ns_last_pid);
// same tells whether it got it.
func startChildWithPID(pid int, exe string) (d *child, same bool, err error) {
	if pid > 1 {
		for range 20 {
			if werr := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); werr != nil {
				break
			}
			d, err = startChildExe(exe)
			if err != nil {
				return nil, false, err
			}
			if d.cmd.Process.Pid == pid {
				return d, true, nil
			}
			d.kill()
		}
	}
	d, err = startChildExe(exe)
	return d, false, err
}

// hotReload is "ernicctl hot-reload" of in: a real restart.
func (c *Chaos) hotReload(in *inst) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(c.busy, in.ID)
	if s.stopped {
		return
	}
	c.restartLocked(in, chaosRestartHot, true)
}

// restartLocked starts a new server process for in, like Restart, but with
// the same QP target and reusing the old process's QP handles (a handle
// comes back with counters from zero). shutdownWrite: the old server writes
// its file once more first (not after a crash). Called with s.mu held.
func (c *Chaos) restartLocked(in *inst, cause string, shutdownWrite bool) {
	s := c.s
	oldPID := in.PID
	if shutdownWrite {
		_ = s.write(in, in.conn)
	}
	in.child.kill()
	if d := c.decoys[in.ID]; d != nil {
		d.kill()
		delete(c.decoys, in.ID)
	}
	s.spawn(in)
	in.hold = nil
	in.gen++
	old := in.eng
	in.eng = newEngine(s.o.Seed, in.ID, in.gen, old.target, s.secs)
	// The old handles first, in the old process's order, then the rest.
	var reuse []uint32
	for _, q := range old.qps {
		reuse = append(reuse, q.handle)
	}
	rest := slices.DeleteFunc(slices.Clone(in.eng.handles), func(h uint32) bool { return slices.Contains(reuse, h) })
	in.eng.handles = append(reuse, rest...)
	in.writes = 0
	in.conn = connNotSet
	delete(c.epochs, in.ID)
	c.lastRestart[in.ID] = time.Now()
	c.counts.Restarts[in.ID]++
	c.emit(ChaosRecord{Event: "restart", Kind: cause, ID: in.ID, PID: in.PID, OldPID: oldPID, Gen: in.gen,
		Detail: fmt.Sprintf("new server process, counters from zero, %d QP handles of the old process reused", len(reuse))})
	s.logf("restart %s id=%d pid %d -> %d", cause, in.ID, oldPID, in.PID)
	_ = s.write(in, in.conn)
	_ = s.writeManifest()
}

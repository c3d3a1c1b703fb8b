// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"fmt"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/procs"
)

// liveness is what the scraper keeps of an instance to tell its server
// from an unrelated process that got the server's pid after it died.
type liveness struct {
	// comm is the command name of the process at the pid, this scrape.
	comm string
	// reused: the receiver saw the process at this pid replaced by
	// another (the same pid with another start time).
	reused bool
	// serverPID and serverComm are the pid and command name of the
	// process that wrote the last stats file accepted.
	serverPID  int
	serverComm string
	// lastWrite is the latest time the instance's stats file was written
	// as far as the reads tell, by any process: its mtime, or for an mtime
	// in the future the time that mtime was first read (futureMtime,
	// futureRead).
	lastWrite               time.Time
	futureMtime, futureRead time.Time
}

// observe records what /proc says of the process at pid, before the
// instance moves to it: whether it replaced the process the receiver saw
// at the same pid (ownerPID, started at ownerStart: the instance's
// process until now).
func (l *liveness) observe(ownerPID int, ownerStart time.Time, pid int, p procs.Process) {
	switch {
	case ownerPID != pid:
		l.reused = false
	case p.Alive && !p.Start.IsZero() && !ownerStart.IsZero() && !p.Start.Equal(ownerStart):
		l.reused = true
	}
	l.comm = p.Comm
}

// wrote records the write time of a stats file read whole at now: its
// mtime, unless that is in the future (a clock stepped back, a file
// touched by hand), when the file was written at the latest when that
// mtime was first read. So an unchanged file whose mtime is ahead, read
// again every scrape, does not move the write time on (which would make
// a process that got the server's pid since read as its server).
func (l *liveness) wrote(mtime, now time.Time) {
	at := mtime
	if mtime.After(now) {
		if !mtime.Equal(l.futureMtime) {
			l.futureMtime, l.futureRead = mtime, now
		}
		at = l.futureRead
	}
	if at.After(l.lastWrite) {
		l.lastWrite = at
	}
}

// serverWrote records that the process at pid, the instance's current
// one, wrote the file accepted, when that process is alive with a readable
// command name: a file accepted while the pid is dead (or its stat
// unreadable) was written by the server last seen there, whose name stays
// the one to compare a later process with.
func (l *liveness) serverWrote(pid int) {
	if l.comm != "" {
		l.serverPID, l.serverComm = pid, l.comm
	}
}

// milliRFC3339 formats the times notServer compares: they are apart by as
// little as tens of milliseconds.
const milliRFC3339 = "2006-01-02T15:04:05.000Z07:00"

// notServer tells why the live process p at pid is not the instance's
// server, or "" when it may be. It is not when the receiver saw the pid
// change process (the server died) and the process now at it started after
// the last stats write and has not written since (its start to about
// 20 ms, procs.Process.PreciseStart: with btime's whole seconds, a process
// started within a second of the last write read as started before it), or
// when its command name is not the one the server had at that pid (until it
// writes a file). A receiver that never saw the server at the pid has no
// such evidence.
func (l *liveness) notServer(pid int, p procs.Process) string {
	if !p.Alive {
		return ""
	}
	if l.reused && !p.PreciseStart.IsZero() && !l.lastWrite.IsZero() && l.lastWrite.Before(p.PreciseStart) {
		return fmt.Sprintf("pid %d is not its server: the process at it started at %s, after the server's last stats write at %s, and has not written since (the server died and the pid was reused); published as down",
			pid, p.PreciseStart.Format(milliRFC3339), l.lastWrite.Format(milliRFC3339))
	}
	if l.serverPID == pid && l.serverComm != "" && p.Comm != "" && p.Comm != l.serverComm {
		return fmt.Sprintf("pid %d is not its server: its command name %q is not the server's %q; published as down", pid, p.Comm, l.serverComm)
	}
	return ""
}

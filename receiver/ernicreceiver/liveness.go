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
	// reused: the process at this pid was seen replaced (another start time).
	reused bool
	// serverPID and serverComm: the process that wrote the last file accepted.
	serverPID  int
	serverComm string
	// lastWrite is the latest write of the stats file the reads tell of; a
	// future mtime counts from when it was first read (futureMtime, futureRead).
	lastWrite               time.Time
	futureMtime, futureRead time.Time
}

// observe records whether p replaced the owner seen at the same pid.
func (l *liveness) observe(ownerPID int, ownerStart time.Time, pid int, p procs.Process) {
	switch {
	case ownerPID != pid:
		l.reused = false
	case p.Alive && !p.Start.IsZero() && !ownerStart.IsZero() && !p.Start.Equal(ownerStart):
		l.reused = true
	}
	l.comm = p.Comm
}

// wrote records the write time of a file read whole. A future mtime counts
// from its first read, or a process that took the pid would pass as the server.
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

// serverWrote records the current process as the file's writer when it is
// alive with a readable name; else the last server seen there stays.
func (l *liveness) serverWrote(pid int) {
	if l.comm != "" {
		l.serverPID, l.serverComm = pid, l.comm
	}
}

// milliRFC3339: the times notServer compares can be milliseconds apart.
const milliRFC3339 = "2006-01-02T15:04:05.000Z07:00"

// notServer tells why the live process p at pid is not the server, or "": the
// pid was seen reused and p started after the last write (PreciseStart, as
// btime has whole seconds), or p's name is not the server's (docs/metrics.md).
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

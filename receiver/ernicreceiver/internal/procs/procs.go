// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package procs tells whether the process at a manifest pid is alive and when
// it started, under a configurable proc root.
//
// Liveness never uses kill(pid, 0): that fails with EPERM for another user's
// process, which the legacy exporter misread as death.
package procs // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/procs"

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// userHZ is USER_HZ, the unit of starttime: 100 on this project's platforms.
const userHZ = 100

// Table looks up processes under one proc root. It caches the boot time and
// is not safe for concurrent use.
type Table struct {
	fs       procfs.FS
	root     string
	bootTime time.Time // zero until /proc/stat was read
	// bootPrecise is the boot time from <root>/uptime (boot.go).
	bootPrecise time.Time
	now         func() time.Time  // the clock bootPrecise is computed with
	hidden      bool              // see Hidden
	buf         []byte            // the last <pid>/stat read (readStat)
	comms       map[string]string // command names returned, interned (comm)
	files       statFiles         // <pid>/stat files kept open (kept_linux.go)
}

// maxComms bounds Table.comms: past it the map starts anew.
const maxComms = 256

// New returns a Table for the proc filesystem at root; root must be a directory.
func New(root string) (*Table, error) {
	root = filepath.Clean(root) // "/proc/" names files as "/proc/<pid>/stat"
	pfs, err := procfs.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("proc_dir %q: %w", root, err)
	}
	_, err = os.Stat(filepath.Join(root, "1"))
	return &Table{fs: pfs, root: root, hidden: errors.Is(err, fs.ErrNotExist), now: time.Now, files: newStatFiles(root)}, nil
}

// CloseUnused closes the kept stat files of pids not looked up since the last call.
func (t *Table) CloseUnused() { t.files.closeUnused() }

// Close closes every <pid>/stat file kept open. The Table stays usable.
func (t *Table) Close() { t.files.closeAll() }

// Hidden reports whether other users' processes are hidden (hidepid,
// ProtectProc): Lookup cannot then tell a dead process from a hidden one.
func (t *Table) Hidden() bool { return t.hidden }

// Process is what /proc tells about one pid.
type Process struct {
	// Alive is true when <root>/<pid> exists and the process is not a zombie.
	Alive bool
	// Start is btime plus field 22: up to a second early (btime has whole
	// seconds) but stable; the receiver publishes it. Zero when unreadable.
	Start time.Time
	// PreciseStart takes the boot time from <root>/uptime: at most about 20 ms
	// early, for ordering against file mtimes; Start when uptime is unusable.
	PreciseStart time.Time
	// Unknown: <root>/<pid> is not visible and Hidden is true; Alive is false.
	Unknown bool
	// Comm is field 2, the command name; empty when unreadable.
	Comm string
}

// BootTime returns btime of <root>/stat, read once and then cached.
func (t *Table) BootTime() (time.Time, error) {
	if t.bootTime.IsZero() {
		st, err := t.fs.Stat()
		if err != nil {
			return time.Time{}, fmt.Errorf("boot time from %s/stat: %w", t.root, err)
		}
		t.bootTime = time.Unix(int64(st.BootTime), 0)
	}
	return t.bootTime, nil
}

// Lookup returns the liveness and start time of pid. A pid <= 0 or a missing
// <root>/<pid> is dead (Unknown when Hidden); an unreadable stat counts as
// alive, with a zero Start and the error.
func (t *Table) Lookup(pid int) (Process, error) {
	if pid <= 0 {
		return Process{}, nil
	}
	data, err := t.readStat(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return Process{Unknown: t.hidden}, nil
	}
	if errors.Is(err, syscall.ESRCH) {
		return Process{}, nil // exited between open and read
	}
	if err != nil {
		return Process{Alive: true}, fmt.Errorf("pid %d: %w", pid, err)
	}
	st, err := parseStat(data)
	if err != nil {
		return Process{Alive: true}, fmt.Errorf("pid %d: %s/%d/stat: %w", pid, t.root, pid, err)
	}
	if st.state == 'Z' || st.state == 'X' {
		return Process{}, nil
	}
	boot, err := t.BootTime()
	if err != nil {
		return Process{Alive: true}, err
	}
	since := time.Duration(st.startTicks) * (time.Second / userHZ)
	return Process{Alive: true, Start: boot.Add(since), PreciseStart: t.preciseBoot(boot).Add(since), Comm: t.comm(st.comm)}, nil
}

// readStat reads <root>/<pid>/stat whole into t.buf.
func (t *Table) readStat(pid int) ([]byte, error) {
	if t.buf == nil {
		t.buf = make([]byte, maxStatBytes+1)
	}
	if n, handled, err := t.files.read(t.root, pid, t.buf); handled {
		switch {
		case err != nil:
			return nil, err
		case n > maxStatBytes:
			return nil, fmt.Errorf("%s: larger than %d bytes", statPath(t.root, pid), maxStatBytes)
		default:
			// One read of a proc file gives all of it: the kernel formats it whole.
			return t.buf[:n], nil
		}
	}
	f, err := os.Open(statPath(t.root, pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, t.buf)
	switch err {
	case io.EOF, io.ErrUnexpectedEOF: // the whole file, shorter than the buffer
		return t.buf[:n], nil
	case nil:
		return nil, fmt.Errorf("%s: larger than %d bytes", f.Name(), maxStatBytes)
	default:
		return nil, err
	}
}

func statPath(root string, pid int) string { return root + "/" + strconv.Itoa(pid) + "/stat" }

// comm interns name, so that a steady scrape allocates nothing.
func (t *Table) comm(name []byte) string {
	if c, ok := t.comms[string(name)]; ok {
		return c
	}
	if t.comms == nil || len(t.comms) >= maxComms {
		t.comms = make(map[string]string)
	}
	c := string(name)
	t.comms[c] = c
	return c
}

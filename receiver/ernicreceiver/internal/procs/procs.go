// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package procs answers the two questions the receiver asks of /proc about a
// pid from the manifest: is the process alive, and when did it start. It
// reads under a configurable root, so a collector in a container can read the
// host's /proc mounted elsewhere: the boot time through
// github.com/prometheus/procfs, each pid's stat file with a parser of its
// own (stat.go) that reads only what the receiver uses.
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

// userHZ is the unit of field 22 (starttime) of /proc/<pid>/stat: clock
// ticks of USER_HZ, which Linux fixes at 100 for user space on the
// architectures this project runs on (procfs assumes the same).
const userHZ = 100

// Table looks up processes under one proc root. It caches the boot time and
// is not safe for concurrent use.
type Table struct {
	fs       procfs.FS
	root     string
	bootTime time.Time // zero until /proc/stat was read
	// bootPrecise is the boot time from <root>/uptime (boot.go); zero
	// until computed.
	bootPrecise time.Time
	now         func() time.Time  // the clock bootPrecise is computed with
	hidden      bool              // see Hidden
	buf         []byte            // the last <pid>/stat read (readStat)
	comms       map[string]string // command names returned, interned (comm)
	files       statFiles         // <pid>/stat files kept open (kept_linux.go)
}

// maxComms bounds Table.comms: past it the map starts anew.
const maxComms = 256

// New returns a Table for the proc filesystem mounted at root (usually
// "/proc"). It fails when root is not a directory.
func New(root string) (*Table, error) {
	root = filepath.Clean(root) // "/proc/" names files as "/proc/<pid>/stat"
	pfs, err := procfs.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("proc_dir %q: %w", root, err)
	}
	_, err = os.Stat(filepath.Join(root, "1"))
	return &Table{fs: pfs, root: root, hidden: errors.Is(err, fs.ErrNotExist), now: time.Now, files: newStatFiles(root)}, nil
}

// CloseUnused closes the <pid>/stat files kept open (on Linux, under a
// proc filesystem) for pids not looked up since the last call: the
// receiver calls it at the end of each scrape.
func (t *Table) CloseUnused() { t.files.closeUnused() }

// Close closes every <pid>/stat file kept open. The Table stays usable.
func (t *Table) Close() { t.files.closeAll() }

// Hidden reports whether other users' processes are hidden from this
// process: <root>/1 (init, which always exists) is not visible, as with
// proc mounted hidepid=invisible (or systemd's ProtectProc=invisible) and an
// unprivileged reader. Lookup then cannot tell a dead process from a
// hidden one.
func (t *Table) Hidden() bool { return t.hidden }

// Process is what /proc tells about one pid.
type Process struct {
	// Alive is true when <root>/<pid> exists and the process is not a zombie.
	Alive bool
	// Start is the process start time, btime of <root>/stat plus field 22 of
	// <root>/<pid>/stat (10 ms resolution); zero when it could not be read.
	// btime has whole seconds (truncated), so Start can be up to a second
	// early; it is stable from one lookup to the next, and what the
	// receiver publishes.
	Start time.Time
	// PreciseStart is the start time with the boot time taken from
	// <root>/uptime instead (boot.go): at most about 20 ms early, never
	// late. It is for ordering the process against file mtimes. It equals
	// Start when <root>/uptime gives nothing usable; zero when Start is.
	PreciseStart time.Time
	// Unknown is true when <root>/<pid> is not visible and Hidden is true:
	// the process may be dead or another user's; Alive is false.
	Unknown bool
	// Comm is field 2 of <root>/<pid>/stat, the process's command name;
	// empty when it could not be read.
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

// Lookup returns liveness and start time of pid. A pid <= 0 or a missing
// <root>/<pid> is a dead process with a nil error; when Hidden, a missing
// <root>/<pid> is Unknown instead. When <root>/<pid>/stat exists but cannot
// be read or parsed, the process counts as alive, Start is zero and the
// error says why.
//
// One read of <root>/<pid>/stat into a buffer the Table keeps, parsed for
// the three fields the receiver uses (stat.go): procfs' Proc and Proc.Stat
// (a stat of the directory, a new buffer and fmt.Fscan of all 52 fields)
// were 6.4 % of the collector's CPU at 16 instances × 64 QPs
// (docs/performance.md).
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

// readStat reads <root>/<pid>/stat whole into t.buf, allocated once at
// maxStatBytes+1 bytes, and returns its content; a file longer than
// maxStatBytes is an error. Under a proc filesystem on Linux the file is
// kept open for the next lookup (kept_linux.go).
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
			// One read of a proc file gives all of it: the kernel
			// formats the whole file and copies what fits.
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

// statPath is <root>/<pid>/stat.
func statPath(root string, pid int) string { return root + "/" + strconv.Itoa(pid) + "/stat" }

// comm returns name as a string, interned, so that looking up the same
// processes every scrape allocates nothing.
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/procs"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// instanceState is what the scraper remembers about one manifest instance
// between scrapes: the server process that owns its counters, the start time
// of those counters, and the last complete stats file read from that
// process.
type instanceState struct {
	pid       int
	procStart time.Time         // from /proc; zero when it could not be read
	start     pcommon.Timestamp // start time of the instance's cumulative counters

	// live tells the instance's server from a process that took its pid.
	live liveness

	// lastPublished is the time of the last scrape that published this
	// instance's counters; a new start time is never earlier (a new
	// stream must not overlap the old one; see accept and newProcess).
	lastPublished time.Time

	stats     *rundir.Stats // last complete stats file of this process; nil if none
	spare     *rundir.Stats // the next read is parsed into it (its memory reused); nil for a new one
	statsTime time.Time     // mtime of that file
	statsInfo fs.FileInfo   // fstat of that file at the end of its read
	seenAt    time.Time     // scrape time at which it was read

	overflowLogged map[string]bool // counters > 2^63-1 already logged for this process

	// shrunkScrapes counts consecutive scrapes whose file checkShape
	// rejected; see shrunkLimit.
	shrunkScrapes int
	// hadLIF: the last file accepted, of this process or an earlier one,
	// had a LIF block (checkShape).
	hadLIF bool

	// prevWrites is the last Write count read from the previous server
	// process of this instance (0 when none was read); hasPrev tells
	// whether the receiver saw a previous process at all.
	prevWrites uint64
	hasPrev    bool

	// otherMax is, per QP handle, the highest `(other opcodes)` value
	// published for this process; see holdOther.
	otherMax map[uint32]uint64

	// statsTruncated counts the attribute values of the current snapshot cut
	// to max_label_length.
	statsTruncated int

	// qpText is the decimal text (the qp attribute) of each QP handle of
	// the previous scrape's published QPs, in their order; qpHandles
	// reuses it while the QPs stay the same.
	qpText   []string
	qpHandle []uint32
}

// shrunkLimit is how many consecutive scrapes may find a smaller file before
// it is taken as the truth: a torn read does not last for seconds, so a file
// that stays smaller was rewritten that way (by hand, or a server that
// dropped a section) and holding on to the old snapshot would publish stale
// values forever.
const shrunkLimit = 3

// track updates the owning process from this scrape's manifest pid and /proc
// start time, and starts a new counter start time when the process changed:
// a new instance, a new pid, or the same pid with another start time (pid
// reuse). The start time is the process start from /proc, or else now (the
// first time the receiver saw that process).
func (st *instanceState) track(pid int, procStart, now time.Time) {
	switch {
	case st.start == 0, st.pid != pid,
		!procStart.IsZero() && !st.procStart.IsZero() && !procStart.Equal(st.procStart):
		st.newProcess(pid, procStart, now)
	case st.procStart.IsZero() && !procStart.IsZero() && st.stats == nil:
		// The start became readable before any counter was published:
		// adopt the true start.
		st.procStart = procStart
		st.start = pcommon.NewTimestampFromTime(procStart)
		if !procStart.After(st.lastPublished) {
			st.start = pcommon.NewTimestampFromTime(afterLast(st.lastPublished))
		}
	}
}

func (st *instanceState) newProcess(pid int, procStart, now time.Time) {
	st.prevWrites, st.hasPrev = 0, st.start != 0
	if st.stats != nil {
		st.prevWrites = st.stats.WriteCount
	}
	st.pid, st.procStart = pid, procStart
	start := now
	if !procStart.IsZero() {
		start = procStart
	}
	// The previous process's counters may have been published after the
	// new one started (the manifest or its file came late): the new
	// stream starts after their last point.
	if !st.lastPublished.IsZero() && !start.After(st.lastPublished) {
		start = afterLast(st.lastPublished)
	}
	st.start = pcommon.NewTimestampFromTime(start)
	st.stats, st.statsTime, st.statsInfo, st.seenAt = nil, time.Time{}, nil, time.Time{}
	st.overflowLogged, st.otherMax = nil, nil
	st.shrunkScrapes = 0
}

// observe records what /proc says of the process at pid before track moves
// the state to it (liveness.observe).
func (st *instanceState) observe(pid int, p procs.Process) {
	st.live.observe(st.pid, st.procStart, pid, p)
}

// wrote records the write time of a stats file read whole at now
// (liveness.wrote).
func (st *instanceState) wrote(mtime, now time.Time) { st.live.wrote(mtime, now) }

// serverWrote records that the instance's current process wrote the file
// accepted (liveness.serverWrote).
func (st *instanceState) serverWrote() { st.live.serverWrote(st.pid) }

// notServer tells why the live process p at pid is not the instance's
// server, or "" when it may be (liveness.notServer).
func (st *instanceState) notServer(pid int, p procs.Process) string {
	return st.live.notServer(pid, p)
}

// pidReused reports whether the receiver saw the process at the
// instance's pid replaced by another.
func (st *instanceState) pidReused() bool { return st.live.reused }

// logOverflowOnce reports whether the counter called name has not yet
// been logged as above 2^63-1 for this process, and marks it logged.
func (st *instanceState) logOverflowOnce(name string) bool {
	if st.overflowLogged[name] {
		return false
	}
	if st.overflowLogged == nil {
		st.overflowLogged = map[string]bool{}
	}
	st.overflowLogged[name] = true
	return true
}

// afterLast is the earliest start of a stream that follows one whose last
// point was at last: a millisecond, Prometheus' resolution, later. A start
// equal to the last point would put the backend's zero sample for the new
// stream (created-timestamp ingestion) on the old stream's last sample,
// where it is dropped, and increase() would miss the new stream's first
// counts.
func afterLast(last time.Time) time.Time { return last.Add(time.Millisecond) }

// unchangedMargin is how long before its read the current snapshot's file
// must have been written for an unchanged size, mtime and inode to prove
// that nothing was written since; see unchanged.
const unchangedMargin = 100 * time.Millisecond

// unchanged reports whether the stats file is still the one of the current
// snapshot, so that the scrape can skip reading and parsing it. The file is
// rewritten in place (truncate, write), which moves its mtime, but file
// times come from a coarse clock (one jiffy, at most 10 ms): two writes in
// one tick can leave the mtime equal. So the shortcut is taken only when the
// snapshot's read came more than unchangedMargin after the file's mtime:
// any later write started after that read, a whole margin past the old
// mtime, and must carry a later one. Size, inode and mtime must all match.
// A server writes about once a second and the receiver scrapes every few
// seconds, so nearly every unchanged file qualifies; the values published
// are exactly those of the last complete write either way.
func (st *instanceState) unchanged(dir *os.Root, name string) bool {
	if st.stats == nil || st.statsInfo == nil || st.seenAt.Sub(st.statsTime) <= unchangedMargin {
		return false
	}
	fi, err := dir.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return fi.Size() == st.statsInfo.Size() && fi.ModTime().Equal(st.statsTime) && os.SameFile(fi, st.statsInfo)
}

// fromPreviousProcess reports whether a stats file was written by the
// instance's previous server process: before the current one started. The
// start computed from /proc can be up to a second early (btime has whole
// seconds), so when the receiver saw the process change, a file within that
// second whose Write count is not below the previous process's last one is
// the previous process's too: a new process starts counting at 0.
func (st *instanceState) fromPreviousProcess(s *rundir.Stats, mtime time.Time) bool {
	if st.procStart.IsZero() {
		return false
	}
	if mtime.Before(st.procStart) {
		return true
	}
	return st.hasPrev && mtime.Before(st.procStart.Add(time.Second)) &&
		s.HasWriteCount && s.WriteCount > 0 && s.WriteCount >= st.prevWrites
}

// qpHandles returns the qp attribute of each of qps: the previous scrape's
// strings when the handles are the same, so that a steady scrape formats
// none.
func (st *instanceState) qpHandles(qps []*rundir.QP) []string {
	same := len(qps) == len(st.qpHandle)
	for i := 0; same && i < len(qps); i++ {
		same = qps[i].Handle == st.qpHandle[i]
	}
	if same {
		return st.qpText
	}
	st.qpText, st.qpHandle = make([]string, len(qps)), make([]uint32, len(qps))
	for i, q := range qps {
		st.qpText[i] = strconv.FormatUint(uint64(q.Handle), 10)
		st.qpHandle[i] = q.Handle
	}
	return st.qpText
}

// holdOther returns the `(other opcodes)` value to publish for QP handle:
// the server derives it (wqes_processed minus the printed opcodes) rather
// than counting it, so it can dip; publishing a dip would read as a counter
// reset. The highest value published for this process is held instead.
func (st *instanceState) holdOther(handle uint32, v uint64) uint64 {
	if st.otherMax == nil {
		st.otherMax = map[uint32]uint64{}
	}
	if m, ok := st.otherMax[handle]; ok && m > v {
		return m
	}
	st.otherMax[handle] = v
	return v
}

// checkShape rejects a stats file that is complete in form but has fewer QP
// blocks or LIF counters than the last one of the same process: both only
// grow while a server lives, so such a file was cut at a block boundary. A
// lower Write count marks a new process the manifest did not show yet; that
// file is accepted (and its counters going down start a new start time).
// Before a file of the current process was accepted (a new server) there
// is no such file to compare with; a file without the LIF block that the
// instance's last accepted file had is then taken as cut before it (the
// server writes the block whole on every write, after the QP blocks). Any
// rejection stops after shrunkLimit scrapes in a row: a file that stays
// so is real.
func (st *instanceState) checkShape(s *rundir.Stats) error {
	if st.shrunkScrapes >= shrunkLimit {
		return nil
	}
	prev := st.stats
	if prev == nil {
		if st.hadLIF && len(s.LIF) == 0 {
			return fmt.Errorf("%w: no LIF block, which the instance's last accepted file had (%d QP blocks)", rundir.ErrShrunk, len(s.QPs))
		}
		return nil
	}
	if s.HasWriteCount && prev.HasWriteCount && s.WriteCount < prev.WriteCount {
		return nil
	}
	if len(s.QPs) < len(prev.QPs) || len(s.LIF) < len(prev.LIF) {
		return fmt.Errorf("%w: %d QP blocks and %d LIF counters after %d and %d",
			rundir.ErrShrunk, len(s.QPs), len(s.LIF), len(prev.QPs), len(prev.LIF))
	}
	return nil
}

// accept makes s the instance's current snapshot. When any counter of s is
// below the same counter of the previous snapshot of this process, the
// counters were reset without the manifest or /proc showing it, and a new
// start time begins at the later of the previous read (the last moment the
// old values were seen) and the last point published with the old start
// (an unchanged or torn file publishes the last read's values at later
// scrapes): the new stream never overlaps the old one. Overflow log lines
// stay once per server process across such a reset.
func (st *instanceState) accept(s *rundir.Stats, info fs.FileInfo, now time.Time) {
	if st.stats != nil && wentDown(st.stats, s) {
		start := st.seenAt
		if !st.lastPublished.IsZero() && !start.After(st.lastPublished) {
			start = afterLast(st.lastPublished)
		}
		st.start = pcommon.NewTimestampFromTime(start)
		st.otherMax = nil // a new start: (other opcodes) may start low
	}
	if st.stats != s {
		st.spare = st.stats // nothing refers to the replaced snapshot now
	}
	st.stats, st.statsTime, st.statsInfo, st.seenAt = s, info.ModTime(), info, now
	st.shrunkScrapes = 0
	st.hadLIF = len(s.LIF) > 0
}

// wentDown reports whether any counter present in both prev and cur is lower
// in cur.
func wentDown(prev, cur *rundir.Stats) bool {
	if prev.HasWriteCount && cur.HasWriteCount && cur.WriteCount < prev.WriteCount {
		return true
	}
	for k := range rundir.DeviceKey(rundir.NumDeviceKeys) {
		p, okP := prev.Device.Get(k)
		c, okC := cur.Device.Get(k)
		if okP && okC && c < p {
			return true
		}
	}
	// LIF counters and QP blocks keep their order from one write to the
	// next (counters in struct order, QPs in hash-table order), so each is
	// compared with the entry at the same index first; only entries that
	// moved are looked up in a map.
	var lif map[string]uint64
	for i, c := range cur.LIF {
		if i < len(prev.LIF) && prev.LIF[i].Name == c.Name {
			if c.Value < prev.LIF[i].Value {
				return true
			}
			continue
		}
		if lif == nil {
			lif = make(map[string]uint64, len(prev.LIF))
			for _, p := range prev.LIF {
				lif[p.Name] = p.Value
			}
		}
		if p, ok := lif[c.Name]; ok && c.Value < p {
			return true
		}
	}
	var qps map[uint32]*rundir.QP
	for i := range cur.QPs {
		q := &cur.QPs[i]
		var p *rundir.QP
		if i < len(prev.QPs) && prev.QPs[i].Handle == q.Handle {
			p = &prev.QPs[i]
		} else {
			if qps == nil {
				qps = make(map[uint32]*rundir.QP, len(prev.QPs))
				for j := range prev.QPs {
					qps[prev.QPs[j].Handle] = &prev.QPs[j]
				}
			}
			if p = qps[q.Handle]; p == nil {
				continue
			}
		}
		if qpWentDown(p, q) {
			return true
		}
	}
	return false
}

// qpWentDown reports whether any counter or opcode count present in both
// blocks of one QP is lower in cur.
func qpWentDown(prev, cur *rundir.QP) bool {
	for k := range rundir.QPKey(rundir.NumQPKeys) {
		pv, okP := prev.Get(k)
		cv, okC := cur.Get(k)
		if okP && okC && cv < pv {
			return true
		}
	}
	for _, c := range cur.Opcodes {
		for _, pc := range prev.Opcodes {
			if pc.Name == c.Name && c.Value < pc.Value {
				return true
			}
		}
	}
	return false
}

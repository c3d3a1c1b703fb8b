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

// instanceState is what the scraper keeps of one manifest instance between
// scrapes.
type instanceState struct {
	pid       int
	procStart time.Time         // from /proc; zero when it could not be read
	start     pcommon.Timestamp // start time of the instance's cumulative counters

	// live tells the instance's server from a process that took its pid.
	live liveness

	// lastPublished: a new start time is never earlier, so streams never overlap.
	lastPublished time.Time

	stats     *rundir.Stats // last complete stats file of this process; nil if none
	spare     *rundir.Stats // the next read is parsed into it (its memory reused); nil for a new one
	statsTime time.Time     // mtime of that file
	statsInfo fs.FileInfo   // fstat of that file at the end of its read
	seenAt    time.Time     // scrape time at which it was read

	overflowLogged map[string]bool // counters > 2^63-1 already logged for this process

	// shrunkScrapes counts the scrapes in a row checkShape rejected.
	shrunkScrapes int
	// hadLIF: the last file accepted had a LIF block (checkShape).
	hadLIF bool

	// prevWrites: the previous process's last Write count; hasPrev: one was seen.
	prevWrites uint64
	hasPrev    bool

	// otherMax is the highest `(other opcodes)` published per QP (holdOther).
	otherMax map[uint32]uint64

	// statsTruncated counts the snapshot's values cut to max_label_length.
	statsTruncated int

	// qpText is the qp attribute of each QP of qpHandle, reused while they last.
	qpText   []string
	qpHandle []uint32
}

// shrunkLimit is how many scrapes in a row a smaller file is rejected before
// it is taken as real: a torn read does not last for seconds.
const shrunkLimit = 3

// track starts a new counter start time when the process changed: a new
// instance, a new pid, or the same pid with another start time (reuse).
// boot is the start when procStart is zero (docs/metrics.md, Counter start
// times and resets).
func (st *instanceState) track(pid int, procStart, boot time.Time) {
	switch {
	case st.start == 0, st.pid != pid,
		!procStart.IsZero() && !st.procStart.IsZero() && !procStart.Equal(st.procStart):
		st.newProcess(pid, procStart, boot)
	case st.procStart.IsZero() && !procStart.IsZero() && st.stats == nil:
		// The start became readable before any counter was published: adopt it.
		st.procStart = procStart
		st.start = pcommon.NewTimestampFromTime(procStart)
		if !procStart.After(st.lastPublished) {
			st.start = pcommon.NewTimestampFromTime(afterLast(st.lastPublished))
		}
	}
}

// newProcess begins a stream. An unknown process start is the boot time: the
// scrape time would put the start on the stream's first point, where a
// backend's start-time zero sample lands on a value, and it would differ
// in a collector restarted meanwhile.
func (st *instanceState) newProcess(pid int, procStart, boot time.Time) {
	st.prevWrites, st.hasPrev = 0, st.start != 0
	if st.stats != nil {
		st.prevWrites = st.stats.WriteCount
	}
	st.pid, st.procStart = pid, procStart
	start := boot
	if !procStart.IsZero() {
		start = procStart
	}
	// The old counters may have been published after the new process started.
	if !st.lastPublished.IsZero() && !start.After(st.lastPublished) {
		start = afterLast(st.lastPublished)
	}
	st.start = pcommon.NewTimestampFromTime(start)
	st.stats, st.statsTime, st.statsInfo, st.seenAt = nil, time.Time{}, nil, time.Time{}
	st.overflowLogged, st.otherMax = nil, nil
	st.shrunkScrapes = 0
}

func (st *instanceState) observe(pid int, p procs.Process) {
	st.live.observe(st.pid, st.procStart, pid, p)
}

func (st *instanceState) wrote(mtime, now time.Time) { st.live.wrote(mtime, now) }

func (st *instanceState) serverWrote() { st.live.serverWrote(st.pid) }

func (st *instanceState) notServer(pid int, p procs.Process) string {
	return st.live.notServer(pid, p)
}

func (st *instanceState) pidReused() bool { return st.live.reused }

// logOverflowOnce reports, once per process, that name overflowed 2^63-1.
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

// afterLast is a millisecond (Prometheus' resolution) after last: a start on
// the old stream's last sample would drop the new stream's zero sample.
func afterLast(last time.Time) time.Time { return last.Add(time.Millisecond) }

const unchangedMargin = 100 * time.Millisecond

// unchanged reports whether the file is still the snapshot's, read over
// unchangedMargin after its mtime (README.md: Files that did not change).
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

// fromPreviousProcess reports whether the file predates the current process.
// btime has whole seconds: after a seen restart, a file within that second
// whose Write count is not below the old process's last is the old one's.
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

// qpHandles returns the qp attributes, formatting none in a steady scrape.
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

// holdOther holds the highest `(other opcodes)` published for handle: the
// server derives it, so it can dip, which would read as a counter reset.
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

// checkShape rejects a complete file with fewer QP blocks or LIF counters
// than the process's last, or a new server's file without the LIF block the
// instance's last file had: both were cut (docs/metrics.md, Torn reads).
// A lower Write count is a new process, accepted.
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

// accept makes s the current snapshot; a counter that went down begins a new
// start time, never before the last point published.
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

// wentDown reports whether a counter in both prev and cur is lower in cur.
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
	// LIF counters and QPs keep their order between writes: compare by index,
	// and look up in a map only what moved.
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// The input faults' checks, each a function of the fault windows and the
// samples, so that input_faults_checks_unit_test.go can test them on
// made-up data.

// The lags allowed at the ends of a fault window: a sample's timestamp is
// its scrape's start, and the scrape reads the manifest and /proc, or a
// stats file written by the next tick, up to a scrape interval later.
const (
	lagStart = time.Second     // from the fault's record to a scrape that sees it
	lagEnd   = time.Second     // before the fault's end: a scrape that may see the end
	lagWrite = 2 * time.Second // a value the next tick's write carries (1 s) and a scrape
	lagBack  = 4 * time.Second // after the end, until the recovered state is published
	// shrunkHold: a fault whose end drops a LIF counter (invalid-utf8's
	// rx_chaos_ counter) leaves a file smaller than the instance's last
	// accepted one, and the receiver publishes that last read for up to
	// shrunkLimit (3) more scrapes of the soak's 1 s before it takes the
	// smaller file (receiver/ernicreceiver/instance.go): the old counter
	// is published that much past lagBack. (Seen in a CI run: the
	// counter published past lagBack while the receiver logged the
	// instance's file as shrunk.)
	shrunkHold = 3 * time.Second
)

// samplesByID merges the series of m by ernic_id, samples in time order.
func samplesByID(m model.Matrix) map[int][]model.SamplePair {
	out := map[int][]model.SamplePair{}
	for _, ss := range m {
		id, _ := strconv.Atoi(string(ss.Metric["ernic_id"]))
		out[id] = append(out[id], ss.Values...)
	}
	for id := range out {
		slices.SortFunc(out[id], func(a, b model.SamplePair) int { return int(a.Timestamp - b.Timestamp) })
	}
	return out
}

// samplesIn returns the samples of ss with a timestamp in [from, to].
func samplesIn(ss []model.SamplePair, from, to time.Time) []model.SamplePair {
	var out []model.SamplePair
	for _, s := range ss {
		if at := s.Timestamp.Time(); !at.Before(from) && !at.After(to) {
			out = append(out, s)
		}
	}
	return out
}

// during reports whether t falls in one of ws widened by before and after.
func during(ws []faultWindow, t time.Time, before, after time.Duration) bool {
	for _, w := range ws {
		if !t.Before(w.start.Add(-before)) && !t.After(w.end.Add(after)) {
			return true
		}
	}
	return false
}

// pidTaken reports whether a pid-reuse fault left the manifest's pid dead
// or taken by an unrelated process (the receiver can tell), rather than
// pointing the manifest at a fresh unrelated process (not root: the
// receiver cannot tell it from a restarted server).
func pidTaken(detail string) bool {
	return strings.Contains(detail, "(ns_last_pid)") || strings.Contains(detail, "no unrelated process could be started")
}

// checkPIDReuseUp: while a crashed server's pid belongs to an unrelated
// process, ernic_instance_up of that instance is 0 (samples from lagStart
// after the fault to lagEnd before its end); from lagBack after the end
// (the new server's first scrapes) to 10 s after, it is 1, and there is
// such a sample unless the soak ended first (stop) or the run directory
// was gone (recreates). That holds also after a future mtime of the same
// instance, where the receiver can tell a decoy of the server's command
// name only by its start time (it once took it for the server there); an
// error there says so.
func checkPIDReuseUp(ws, recreates, future []faultWindow, up map[int][]model.SamplePair, stop time.Time) checkCount {
	var c checkCount
	for _, w := range ws {
		// The receiver can only tell this decoy by its start time (it has
		// the server's command name), and the instance's stats file had a
		// future mtime less than FutureMtime before.
		afterFutureMtime := false
		for _, f := range future {
			if !strings.Contains(w.detail, "command name: the server's") {
				break
			}
			if f.id == w.id && f.start.Before(w.start) && w.start.Sub(f.start) < sim.FutureMtime {
				afterFutureMtime = true
			}
		}
		c.Windows++
		if !pidTaken(w.detail) {
			c.Skipped = append(c.Skipped, fmt.Sprintf("instance %d at %s: %s", w.id, w.start.Format("15:04:05"), w.detail))
			continue
		}
		down := samplesIn(up[w.id], w.start.Add(lagStart), w.end.Add(-lagEnd))
		if len(down) > 0 {
			c.Checked++
		}
		for _, s := range down {
			c.Samples++
			if s.Value != 0 {
				line := fmt.Sprintf("instance %d: ernic_instance_up = %v at %s, during pid-reuse %s..%s (%s)", w.id, s.Value,
					s.Timestamp.Time().Format("15:04:05.000"), w.start.Format("15:04:05.000"), w.end.Format("15:04:05.000"), w.detail)
				if afterFutureMtime {
					line += "; the stats file had a future mtime before (future-mtime)"
				}
				c.Errors = append(c.Errors, line)
			}
		}
		backTo := w.end.Add(10 * time.Second)
		if backTo.After(stop) {
			backTo = stop
		}
		back := 0
		for _, s := range samplesIn(up[w.id], w.end.Add(lagBack), backTo) {
			if during(recreates, s.Timestamp.Time(), time.Second, 2*time.Second) {
				continue
			}
			c.Samples++
			back++
			if s.Value != 1 {
				c.errorf("instance %d: ernic_instance_up = %v at %s, after the server came back at %s", w.id, s.Value,
					s.Timestamp.Time().Format("15:04:05.000"), w.end.Format("15:04:05.000"))
			}
		}
		if back == 0 && backTo.Sub(w.end) > lagBack+2*time.Second && !during(recreates, w.end.Add(lagBack), time.Second, 2*time.Second) {
			c.errorf("instance %d: no ernic_instance_up sample from %s to %s, after the server came back", w.id,
				w.end.Add(lagBack).Format("15:04:05.000"), backTo.Format("15:04:05.000"))
		}
	}
	return c
}

// sanitised is what the receiver publishes for a value with invalid UTF-8
// (receiver labels.go, guardLabel): each bad sequence U+FFFD, then "~"
// and the FNV-1a hash of the raw value in 8 hex digits.
func sanitised(raw string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(raw))
	return fmt.Sprintf("%s~%08x", strings.ToValidUTF8(raw, "\uFFFD"), h.Sum32())
}

// checkInvalidUTF8: the series of the bad LIF counter and of the bad
// connection state carry the sanitised values; the counter's samples are
// the fault's value, and fall in a fault window of their instance (up to
// lagBack and shrunkHold after it); inside a window (from lagWrite after its start to
// lagEnd before its end) ernic_labels_truncated of the instance is 2 (the
// counter name and the state) and both series have samples there.
// counters and states are every series of the LIF counter family whose
// name starts like the bad one, and of ernic_connection_up whose state
// starts like the bad one; truncated are ernic_labels_truncated by id.
func checkInvalidUTF8(ws []faultWindow, counters, states model.Matrix, truncated map[int][]model.SamplePair) checkCount {
	var c checkCount
	wantName, wantState := sanitised(sim.ChaosBadLIFName), sanitised(sim.ChaosBadConnection)
	names, conns := map[int][]model.SamplePair{}, map[int][]model.SamplePair{}
	for _, ss := range counters {
		id, _ := strconv.Atoi(string(ss.Metric["ernic_id"]))
		if got := string(ss.Metric["counter"]); got != wantName {
			c.errorf("instance %d: LIF counter %q published, want the sanitised %q", id, got, wantName)
			continue
		}
		names[id] = append(names[id], ss.Values...)
	}
	for _, ss := range states {
		id, _ := strconv.Atoi(string(ss.Metric["ernic_id"]))
		if got := string(ss.Metric["state"]); got != wantState {
			c.errorf("instance %d: connection state %q published, want the sanitised %q", id, got, wantState)
			continue
		}
		conns[id] = append(conns[id], ss.Values...)
	}
	byID := map[int][]faultWindow{}
	for _, w := range ws {
		byID[w.id] = append(byID[w.id], w)
	}
	for id, ss := range names {
		for _, s := range ss {
			c.Samples++
			at := s.Timestamp.Time()
			ok := false
			for _, w := range byID[id] {
				if !at.Before(w.start.Add(-lagStart)) && !at.After(w.end.Add(lagBack+shrunkHold)) {
					ok = true
					if uint64(s.Value) != w.value {
						c.errorf("instance %d: %s = %v at %s, the fault wrote %d", id, wantName, s.Value, at.Format("15:04:05.000"), w.value)
					}
				}
			}
			if !ok {
				c.errorf("instance %d: %s = %v at %s, outside every invalid-utf8 fault of the instance", id, wantName, s.Value, at.Format("15:04:05.000"))
			}
		}
	}
	for _, w := range ws {
		c.Windows++
		from, to := w.start.Add(lagWrite), w.end.Add(-lagEnd)
		tr := samplesIn(truncated[w.id], from, to)
		if len(tr) == 0 {
			continue
		}
		c.Checked++
		for _, s := range tr {
			c.Samples++
			if s.Value != 2 {
				c.errorf("instance %d: ernic_labels_truncated = %v at %s during invalid-utf8 %s..%s, want 2 (counter name and connection state)",
					w.id, s.Value, s.Timestamp.Time().Format("15:04:05.000"), w.start.Format("15:04:05.000"), w.end.Format("15:04:05.000"))
			}
		}
		if len(samplesIn(names[w.id], from, to)) == 0 {
			c.errorf("instance %d: no sample of LIF counter %q during invalid-utf8 %s..%s", w.id, wantName, w.start.Format("15:04:05.000"), w.end.Format("15:04:05.000"))
		}
		if len(samplesIn(conns[w.id], from, to)) == 0 {
			c.errorf("instance %d: no sample of connection state %q during invalid-utf8 %s..%s", w.id, wantState, w.start.Format("15:04:05.000"), w.end.Format("15:04:05.000"))
		}
	}
	return c
}

// checkFutureMtime: no ernic_stats_age_seconds sample is negative; while
// the stats file's mtime is hours ahead (from lagStart after the fault to
// lagEnd before its end) the age of that instance is 0.
func checkFutureMtime(ws []faultWindow, age map[int][]model.SamplePair) checkCount {
	var c checkCount
	for id, ss := range age {
		for _, s := range ss {
			if s.Value < 0 {
				c.errorf("instance %d: ernic_stats_age_seconds = %v at %s, negative", id, s.Value, s.Timestamp.Time().Format("15:04:05.000"))
			}
		}
	}
	for _, w := range ws {
		c.Windows++
		ss := samplesIn(age[w.id], w.start.Add(lagStart), w.end.Add(-lagEnd))
		if len(ss) > 0 {
			c.Checked++
		}
		for _, s := range ss {
			c.Samples++
			if s.Value != 0 {
				c.errorf("instance %d: ernic_stats_age_seconds = %v at %s while the file's mtime is %v ahead, want 0", w.id, s.Value,
					s.Timestamp.Time().Format("15:04:05.000"), sim.FutureMtime)
			}
		}
	}
	return c
}

// checkMaxInstances: ernic_instances_unpublished is the manifest's
// instances (initial, plus one at each add) over limit, the collector's
// max_instances, except around an add and while the manifest is being
// raced, torn or the run directory is gone (noisy); and the instances with
// samples of ernic_instance_up (published) are among the limit of lowest
// id, each of which is published after the last add. up is by id;
// unpublished the cluster gauge's samples.
func checkMaxInstances(initial, limit int, adds, noisy []faultWindow, unpublished []model.SamplePair, up map[int][]model.SamplePair, stop time.Time) (checkCount, []int) {
	var c checkCount
	c.Windows = len(adds)
	size := func(t time.Time) int {
		n := initial
		for _, a := range adds {
			if !a.start.After(t) {
				n++
			}
		}
		return n
	}
	excess := 0
	for _, s := range unpublished {
		at := s.Timestamp.Time()
		if during(adds, at, 500*time.Millisecond, 2*time.Second) || during(noisy, at, time.Second, 2*time.Second) {
			continue
		}
		c.Samples++
		want := size(at) - limit
		if want < 0 {
			want = 0
		}
		if want > 0 {
			excess++
		}
		if float64(s.Value) != float64(want) {
			c.errorf("ernic_instances_unpublished = %v at %s with %d instances in the manifest and max_instances %d, want %d",
				s.Value, at.Format("15:04:05.000"), size(at), limit, want)
		}
	}
	if excess > 0 {
		c.Checked = 1
	}
	if len(adds) > 0 && size(stop) > limit && excess == 0 {
		c.errorf("the manifest grew to %d instances (max_instances %d), but no sample of ernic_instances_unpublished was checked while it was over", size(stop), limit)
	}
	var ids []int
	for id := range up {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if id > limit { // ids are 1..n: the limit of lowest id are 1..limit
			c.errorf("instance %d published (%d samples of ernic_instance_up), beyond the %d instances of lowest id", id, len(up[id]), limit)
		}
	}
	last := time.Time{}
	for _, a := range adds {
		last = a.start
	}
	if !last.IsZero() && size(stop) > limit {
		for id := 1; id <= limit; id++ {
			if len(samplesIn(up[id], last.Add(lagBack), stop)) == 0 {
				c.errorf("instance %d (of the %d lowest ids) not published after the last add at %s", id, limit, last.Format("15:04:05.000"))
			}
		}
	}
	return c, ids
}

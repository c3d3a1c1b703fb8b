// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// The input-fault checks on made-up data: each passes what the receiver
// should publish and fails what a receiver without the safeguard would
// (or the inverted expectation), so that none of them can pass everything.

var tFault = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// atFault is tFault plus s seconds.
func atFault(s float64) time.Time { return tFault.Add(time.Duration(s * float64(time.Second))) }

// every1s returns one sample a second from from to to (seconds), of value
// v(t).
func every1s(from, to float64, v func(s float64) float64) []model.SamplePair {
	var out []model.SamplePair
	for s := from; s <= to; s++ {
		out = append(out, model.SamplePair{Timestamp: model.TimeFromUnixNano(atFault(s).UnixNano()), Value: model.SampleValue(v(s))})
	}
	return out
}

func wantErrors(t *testing.T, name string, c checkCount, errs bool) {
	t.Helper()
	if got := len(c.Errors) > 0; got != errs {
		t.Errorf("%s: errors %v, want errors: %v", name, c.Errors, errs)
	}
	if !errs && c.Checked == 0 && c.Windows > 0 {
		t.Errorf("%s: nothing checked: %+v", name, c)
	}
}

func TestCheckPIDReuseUp(t *testing.T) {
	// pid-reuse at 10..14 s (the pid taken at 10, the server back at 14).
	ws := []faultWindow{{id: 3, start: atFault(10), end: atFault(14), detail: "server pid 9 killed; an unrelated process (command name: the server's) now has pid 9 (ns_last_pid); ..."}}
	stop := atFault(40)
	right := func(s float64) float64 {
		if s >= 9.5 && s < 14.5 {
			return 0
		}
		return 1
	}
	wantErrors(t, "as the receiver should publish", checkPIDReuseUp(ws, nil, nil, map[int][]model.SamplePair{3: every1s(0, 40, right)}, stop), false)
	// Without the check: the unrelated process read as the server (up 1).
	before := func(s float64) float64 {
		if s >= 9.5 && s < 10 {
			return 0
		}
		return 1
	}
	wantErrors(t, "pid reuse read as alive", checkPIDReuseUp(ws, nil, nil, map[int][]model.SamplePair{3: every1s(0, 40, before)}, stop), true)
	// Inverted: still down after the server came back.
	stuck := func(s float64) float64 {
		if s >= 10 {
			return 0
		}
		return 1
	}
	wantErrors(t, "down after the server came back", checkPIDReuseUp(ws, nil, nil, map[int][]model.SamplePair{3: every1s(0, 40, stuck)}, stop), true)
	// No sample after the server came back.
	wantErrors(t, "no sample after", checkPIDReuseUp(ws, nil, nil, map[int][]model.SamplePair{3: every1s(0, 13, right)}, stop), true)
	// After a future mtime of the same instance the decoy reads as down
	// too, and an error says what came before; a future mtime of another
	// instance changes nothing.
	future := []faultWindow{{id: 3, start: atFault(2), end: atFault(5)}}
	c := checkPIDReuseUp(ws, nil, future, map[int][]model.SamplePair{3: every1s(0, 40, before)}, stop)
	if len(c.Errors) == 0 || !strings.Contains(c.Errors[0], "future mtime before") {
		t.Errorf("after a future mtime: errors %v; want one naming the future mtime", c.Errors)
	}
	wantErrors(t, "after a future mtime, down", checkPIDReuseUp(ws, nil, future, map[int][]model.SamplePair{3: every1s(0, 40, right)}, stop), false)
	future[0].id = 4
	wantErrors(t, "future mtime of another instance", checkPIDReuseUp(ws, nil, future, map[int][]model.SamplePair{3: every1s(0, 40, before)}, stop), true)
	// A decoy with a command name of its own must read as down even after a
	// future mtime.
	future[0].id = 3
	renamed := []faultWindow{{id: 3, start: atFault(10), end: atFault(14), detail: "server pid 9 killed; an unrelated process (command name: ernic-decoy) now has pid 9 (ns_last_pid); ..."}}
	wantErrors(t, "renamed decoy after a future mtime", checkPIDReuseUp(renamed, nil, future, map[int][]model.SamplePair{3: every1s(0, 40, before)}, stop), true)
	wantErrors(t, "renamed decoy after a future mtime, down", checkPIDReuseUp(renamed, nil, future, map[int][]model.SamplePair{3: every1s(0, 40, right)}, stop), false)
	// The manifest pointed at a fresh process (not root): skipped.
	fresh := []faultWindow{{id: 3, start: atFault(10), end: atFault(14), detail: "the pid could not be reused (not root or taken), so the manifest entry now points at the unrelated process 12"}}
	c = checkPIDReuseUp(fresh, nil, nil, map[int][]model.SamplePair{3: every1s(0, 40, before)}, stop)
	if len(c.Errors) > 0 || len(c.Skipped) != 1 {
		t.Errorf("fresh process: %+v, want skipped", c)
	}
}

func TestCheckInvalidUTF8(t *testing.T) {
	if got, want := sanitised("a\xff\xfeb"), "a\uFFFDb~"; len(got) != len(want)+8 || got[:len(want)] != want {
		t.Errorf("sanitised = %q", got)
	}
	ws := []faultWindow{{id: 4, start: atFault(10), end: atFault(15), value: 1767225610}}
	name, state := sanitised(sim.ChaosBadLIFName), sanitised(sim.ChaosBadConnection)
	series := func(lbl, v string, vals []model.SamplePair) *model.SampleStream {
		return &model.SampleStream{Metric: model.Metric{"ernic_id": "4", model.LabelName(lbl): model.LabelValue(v)}, Values: vals}
	}
	val := func(float64) float64 { return 1767225610 }
	one := func(float64) float64 { return 1 }
	trunc := func(n float64) map[int][]model.SamplePair {
		return map[int][]model.SamplePair{4: every1s(0, 30, func(s float64) float64 {
			if s >= 11 && s <= 15 {
				return n
			}
			return 0
		})}
	}
	good := model.Matrix{series("counter", name, every1s(11, 15, val))}
	states := model.Matrix{series("state", state, every1s(11, 15, one))}
	wantErrors(t, "as the receiver should publish", checkInvalidUTF8(ws, good, states, trunc(2)), false)
	// Without sanitising: the raw bytes stored (Prometheus's JSON shows each
	// bad byte as U+FFFD, no hash suffix); nothing counted.
	raw := model.Matrix{series("counter", "rx_chaos_\uFFFD\uFFFD_bad", every1s(11, 15, val))}
	rawStates := model.Matrix{series("state", "connected (chaos \uFFFD)", every1s(11, 15, one))}
	wantErrors(t, "raw name", checkInvalidUTF8(ws, raw, states, trunc(2)), true)
	wantErrors(t, "raw state", checkInvalidUTF8(ws, good, rawStates, trunc(2)), true)
	wantErrors(t, "not counted", checkInvalidUTF8(ws, good, states, trunc(0)), true)
	wantErrors(t, "counted once", checkInvalidUTF8(ws, good, states, trunc(1)), true)
	// A wrong value, a sample outside the fault, no series at all.
	wantErrors(t, "wrong value", checkInvalidUTF8(ws, model.Matrix{series("counter", name, every1s(11, 15, one))}, states, trunc(2)), true)
	wantErrors(t, "outside the fault", checkInvalidUTF8(ws, model.Matrix{series("counter", name, every1s(11, 25, val))}, states, trunc(2)), true)
	// The last read held for shrunkLimit scrapes after the fault's end
	// (its counter gone, the file is smaller): up to 15+4+3 s, not after.
	wantErrors(t, "held while shrunk", checkInvalidUTF8(ws, model.Matrix{series("counter", name, every1s(11, 22, val))}, states, trunc(2)), false)
	wantErrors(t, "held too long", checkInvalidUTF8(ws, model.Matrix{series("counter", name, every1s(11, 23, val))}, states, trunc(2)), true)
	wantErrors(t, "no series", checkInvalidUTF8(ws, nil, states, trunc(2)), true)
}

func TestCheckFutureMtime(t *testing.T) {
	ws := []faultWindow{{id: 2, start: atFault(10), end: atFault(14)}}
	age := func(f func(s float64) float64) map[int][]model.SamplePair {
		return map[int][]model.SamplePair{2: every1s(0, 30, f), 3: every1s(0, 30, func(float64) float64 { return 0.4 })}
	}
	clamped := func(s float64) float64 {
		if s >= 10 && s < 14 {
			return 0
		}
		return 0.5
	}
	wantErrors(t, "as the receiver should publish", checkFutureMtime(ws, age(clamped)), false)
	// Without the clamp: 3 h in the future is an age of -10800 s.
	negative := func(s float64) float64 {
		if s >= 10 && s < 14 {
			return -10800 + s - 10
		}
		return 0.5
	}
	wantErrors(t, "negative age", checkFutureMtime(ws, age(negative)), true)
	// The file's age of before the fault kept: not 0.
	wantErrors(t, "not clamped to 0", checkFutureMtime(ws, age(func(float64) float64 { return 0.5 })), true)
}

func TestCheckMaxInstances(t *testing.T) {
	// 5 instances, max 6: the huge one at 5 s (6), grows at 20 and 30 s.
	adds := []faultWindow{{id: 6, start: atFault(5)}, {id: 7, start: atFault(20)}, {id: 8, start: atFault(30)}}
	for i := range adds {
		adds[i].end = adds[i].start
	}
	stop := atFault(40)
	excess := func(s float64) float64 {
		switch {
		case s >= 30:
			return 2
		case s >= 20:
			return 1
		}
		return 0
	}
	up := map[int][]model.SamplePair{}
	for id := 1; id <= 6; id++ {
		up[id] = every1s(0, 40, func(float64) float64 { return 1 })
	}
	c, ids := checkMaxInstances(5, 6, adds, nil, every1s(0, 40, excess), up, stop)
	wantErrors(t, "as the receiver should publish", c, false)
	if len(ids) != 6 {
		t.Errorf("published ids %v", ids)
	}
	// Inverted: one too many (or too few) counted.
	c, _ = checkMaxInstances(5, 6, adds, nil, every1s(0, 40, func(s float64) float64 { return excess(s) + 1 }), up, stop)
	wantErrors(t, "excess+1", c, true)
	c, _ = checkMaxInstances(5, 6, adds, nil, every1s(0, 40, func(float64) float64 { return 0 }), up, stop)
	wantErrors(t, "no cap", c, true)
	// An added instance published (the highest ids must be the ones left out).
	up7 := map[int][]model.SamplePair{7: every1s(21, 40, func(float64) float64 { return 1 })}
	for id := 1; id <= 6; id++ {
		up7[id] = up[id]
	}
	c, _ = checkMaxInstances(5, 6, adds, nil, every1s(0, 40, excess), up7, stop)
	wantErrors(t, "highest id published", c, true)
	// A low id left out after the adds (the wrong instances held back).
	up5 := map[int][]model.SamplePair{}
	for id := 1; id <= 6; id++ {
		if id != 5 {
			up5[id] = up[id]
		}
	}
	up5[5] = every1s(0, 19, func(float64) float64 { return 1 })
	c, _ = checkMaxInstances(5, 6, adds, nil, every1s(0, 40, excess), up5, stop)
	wantErrors(t, "low id left out", c, true)
	// Samples around an add or a manifest fault are not checked.
	noisy := []faultWindow{{start: atFault(12), end: atFault(13)}}
	c, _ = checkMaxInstances(5, 6, adds, noisy, every1s(0, 40, func(s float64) float64 {
		if s >= 12 && s <= 14 {
			return 9
		}
		return excess(s)
	}), up, stop)
	wantErrors(t, "noisy window", c, false)
}

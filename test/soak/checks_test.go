// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// The soak's checkers on made-up data, so that a checker that passes
// everything cannot go unnoticed.

func TestCheckSeries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	k := seriesKey{id: 2, family: "ernic_commands_total"}
	run := &chaosRun{index: writeIndex{}, recreates: []time.Time{at(50)}}
	for i, v := range []uint64{10, 20, 30, 40} { // process 0, written at 0..3s
		run.index.add(k, v, 0, at(i))
	}
	for i, v := range []uint64{5, 15} { // process 1, written at 10, 11s
		run.index.add(k, v, 1<<20, at(10+i))
	}
	run.index.add(k, 35, 1<<20, at(60)) // process 1, much later
	// samples are 3s apart from start (seconds).
	samples := func(start int, vs ...float64) []model.SamplePair {
		var out []model.SamplePair
		for i, v := range vs {
			out = append(out, model.SamplePair{Timestamp: model.TimeFromUnixNano(at(start + 3*i).UnixNano()), Value: model.SampleValue(v)})
		}
		return out
	}
	for _, c := range []struct {
		name             string
		values           []model.SamplePair
		wrong, decr, bad int
	}{
		{"written values, one restart", samples(3, 20, 40, 5, 15), 0, 1, 0},
		{"a value never written", samples(1, 10, 25), 1, 0, 0},
		{"down within one process", samples(1, 10, 30, 20), 0, 1, 1},
		{"a value written only later", samples(1, 10, 35), 1, 0, 0},
		{"the slack: written 2s after the sample", samples(9, 5, 15), 0, 0, 0},
		{"older process after newer", samples(12, 15, 10), 0, 1, 1},
	} {
		sum := &summary{}
		checkSeries(sum, run, k, c.values)
		if sum.WrongValues != c.wrong || sum.SampleDecreases != c.decr || sum.FalseDecreases != c.bad {
			t.Errorf("%s: wrong %d, decreases %d, false %d; want %d, %d, %d (%v %v)", c.name,
				sum.WrongValues, sum.SampleDecreases, sum.FalseDecreases, c.wrong, c.decr, c.bad, sum.WrongList, sum.FalseResetList)
		}
	}
	// A decrease within one process across a removal of the run directory
	// is false, and said to be across it.
	sum := &summary{}
	vs := []model.SamplePair{
		{Timestamp: model.TimeFromUnixNano(at(49).UnixNano()), Value: 30},
		{Timestamp: model.TimeFromUnixNano(at(53).UnixNano()), Value: 20},
	}
	checkSeries(sum, run, k, vs)
	if sum.FalseDecreases != 1 || !strings.Contains(sum.FalseResetList[0], "across a removal of the run directory") {
		t.Errorf("across the removal: false %d %v; want 1, said to be across the removal", sum.FalseDecreases, sum.FalseResetList)
	}
	// A QP count that is the QP blocks of a torn-qp-boundary write near
	// the sample is wrong, and said to be that; the same value far from the
	// cut is wrong without it.
	qk := seriesKey{id: 2, family: famQPCount}
	run.tornQPs = map[int][]tornCut{2: {{at: at(21), qps: 3}}}
	run.index.add(qk, 8, 0, at(0))
	sum = &summary{}
	checkSeries(sum, run, qk, samples(19, 8, 3))
	if sum.WrongValues != 1 || sum.FalseDecreases != 1 || !strings.Contains(sum.WrongList[0], "torn-qp-boundary") {
		t.Errorf("torn-qp-boundary: wrong %d, false %d %v; want 1, 1, said to be the torn write's", sum.WrongValues, sum.FalseDecreases, sum.WrongList)
	}
	sum = &summary{}
	checkSeries(sum, run, qk, samples(40, 8, 3))
	if sum.WrongValues != 1 || sum.FalseDecreases != 1 || strings.Contains(sum.WrongList[0], "torn-qp-boundary") {
		t.Errorf("far from the cut: wrong %d, false %d %v; want 1, 1, not said to be the torn write's", sum.WrongValues, sum.FalseDecreases, sum.WrongList)
	}
	// A series the simulator never wrote: all wrong.
	sum = &summary{}
	checkSeries(sum, run, seriesKey{id: 9, family: "ernic_commands_total"}, samples(1, 1, 2))
	if sum.WrongValues != 2 {
		t.Errorf("unknown series: wrong %d, want 2", sum.WrongValues)
	}
}

func TestFaultKey(t *testing.T) {
	for msg, want := range map[string]string{
		"run directory /r: open /r: no such file or directory; nothing to publish until rocm-ernic creates it":                        "run-dir",
		"/r/instances.json does not exist yet; nothing to publish until the launcher writes it":                                       "manifest-missing",
		"/r/instances.json: incomplete file: manifest is not a whole JSON document: unexpected EOF; using the last complete manifest": "manifest",
		"/r/instances.json: 2 unusable entries or keys, the first: x":                                                                 "manifest-entries",
		"instance 3: /r/3.stats: incomplete file: empty file; publishing the last complete read of 2026-11-30T00:46:34Z":              "stats-torn:3",
		"instance 3: /r/3.stats: file changed while it was read; no device metrics this scrape":                                       "stats-torn:3",
		"instance 2: /r/2.stats: stats file lost QP blocks or LIF counters: 1 QP blocks; publishing the last complete read of x":      "stats-shrunk:2",
		"instance 6: /r/6.stats: path escapes from parent; publishing the last complete read of x":                                    "stats-unreadable:6",
		"instance 4: /r/4.stats: 8392719 bytes, over the limit of 8388608; publishing the last complete read of x":                    "stats-unreadable:4",
		"/r/5.stats: 3 unusable lines, the first: line 41: x":                                                                         "stats-lines:5",
		"instance 5: pid 123: permission denied":                                                                                      "proc:5",
		"instance 5: vm.launched_at 1e99 is not an epoch time in the past; using the age of vm_pid if any":                            "vm-launched-at:5",
	} {
		if got := faultKey(msg); got != want {
			t.Errorf("faultKey(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestGoroutineCounts(t *testing.T) {
	trace := `SCHED 0ms: gomaxprocs=2 idleprocs=0 threads=4
  P0: status=1
  M0: p=0 curg=1
  G1: status=2(chan receive) m=0 lockedm=0
  G2: status=4(force gc (idle)) m=nil lockedm=nil
  G3: status=6() m=nil lockedm=nil
SCHED 10000ms: gomaxprocs=2 idleprocs=2 threads=8
  G1: status=4(select) m=nil lockedm=nil
  G2: status=4(force gc (idle)) m=nil lockedm=nil
  G7: status=1() m=nil lockedm=nil
  G9: status=3() m=2 lockedm=nil
`
	got := goroutineCounts(trace)
	if len(got) != 2 || got[0] != 2 || got[1] != 4 {
		t.Errorf("goroutineCounts = %v, want [2 4]", got)
	}
}

func TestAnalyseLog(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &chaosRun{recreates: []time.Time{t0.Add(100 * time.Second)}, drops: map[int][]time.Time{3: {t0.Add(200 * time.Second)}}}
	log := `{"level":"error","ts":"2026-01-01T00:00:01Z","msg":"Error scraping metrics","error":"instance 2: /r/2.stats: incomplete file: empty file; publishing the last complete read of x\nrun directory /r: gone; nothing to publish until rocm-ernic creates it"}
{"level":"error","ts":"2026-01-01T00:05:01Z","msg":"Error scraping metrics","error":"instance 2: /r/2.stats: file changed while it was read; publishing the last complete read of x"}
{"level":"error","ts":"2026-01-01T00:15:01Z","msg":"Error scraping metrics","error":"instance 2: /r/2.stats: incomplete file: empty file; publishing the last complete read of x"}
{"level":"warn","ts":"2026-01-01T00:00:02Z","msg":"Counter above 2^63-1 not published","ernic.id":"3","counter":"rx_dma_error","pid":7}
{"level":"warn","ts":"2026-01-01T00:01:50Z","msg":"Counter above 2^63-1 not published","ernic.id":"3","counter":"rx_dma_error","pid":7}
{"level":"warn","ts":"2026-01-01T00:03:30Z","msg":"Counter above 2^63-1 not published","ernic.id":"3","counter":"rx_dma_error","pid":7}
{"level":"warn","ts":"2026-01-01T00:04:00Z","msg":"Counter above 2^63-1 not published","ernic.id":"3","counter":"rx_dma_error","pid":7}
{"level":"warn","ts":"2026-01-01T00:04:00Z","msg":"Exporting failed"}
not json
`
	r := analyseLog(log, run)
	if r.Keys["stats-torn:2"] != 3 || r.Keys["run-dir"] != 1 {
		t.Errorf("keys %v", r.Keys)
	}
	if len(r.TooOften) != 1 {
		t.Errorf("too often: %v, want the second stats-torn:2 (5 min after the first)", r.TooOften)
	}
	if d := r.OverflowDup; len(d) != 3 || !strings.Contains(d[0], "run directory was removed") || !strings.Contains(d[1], "qp-reuse") || strings.Contains(d[2], "(") {
		t.Errorf("overflow repeats: %v; want 3: across the run dir's removal, across a qp-reuse, and plain", d)
	}
	if r.Other["Exporting failed"] != 1 || r.Unparsed != 1 {
		t.Errorf("other %v, unparsed %d", r.Other, r.Unparsed)
	}
}

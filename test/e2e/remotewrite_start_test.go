// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestRemoteWriteStartTimestampIncrease: two collectors read the same
// simulator, one sending remote write 2.0 and one 1.0, each into a
// Prometheus 3 with created-timestamp-zero-ingestion.
//
// A new series (instance 3, from the collectors' start): the 2.0 series
// has a 0 sample at the server process's start (the start timestamp the
// receiver sets), so increase() from just before it is exactly the Write
// count reached, a count the simulator wrote; the 1.0 series starts at its
// first scrape, and increase() over the same range falls short.
//
// Instance 2 restarted: both count the reset alike (Prometheus takes the
// first value after a drop as counted from 0, which it is here), and both
// miss only the old process's writes after its last scrape, which no
// protocol carries.
func TestRemoteWriteStartTimestampIncrease(t *testing.T) {
	t.Parallel()
	harness.CollectorBinary(t)
	ctx := context.Background()
	v2 := newRemoteWriteTo(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, Seed: 5},
		startPrometheus3(t, "--enable-feature=created-timestamp-zero-ingestion"))
	v1 := *v2
	v1.prom = startPrometheus3(t, "--enable-feature=created-timestamp-zero-ingestion")
	v1.stateDir = t.TempDir()
	v1.args = slices.Clone(v2.args)
	v1.env = []string{"ERNIC_RUN_DIR=" + v2.runDir, "ERNIC_REMOTE_WRITE_URL=" + v1.prom.WriteURL(), "ERNIC_STATE_DIR=" + v1.stateDir}
	v2.withV2()
	v2.startCollector()
	v1.startCollector()
	proms := []struct {
		name string
		p    *harness.Prometheus
	}{{"2.0", v2.prom}, {"1.0", v1.prom}}

	const sel2, sel3 = `ernic_stats_writes_total{ernic_id="2"}`, `ernic_stats_writes_total{ernic_id="3"}`
	latest := func(p *harness.Prometheus) float64 {
		v, err := p.ScalarAt(ctx, sel2, time.Now())
		if err != nil {
			return -1
		}
		return v
	}
	both := func(what string, ok func(float64) bool) {
		eventually(t, waitTimeout, what, func() []string {
			if a, b := latest(v2.prom), latest(v1.prom); !ok(a) || !ok(b) {
				return []string{fmt.Sprintf("%s: 2.0 %v, 1.0 %v", sel2, a, b)}
			}
			return nil
		})
	}
	both("instance 2's writes in both", func(v float64) bool { return v >= 20 })

	// A new series: instance 3 from its first sample.
	w3 := v2.writes.of(3)
	raw3 := restartSamples(t, v2.prom, sel3, 5*time.Minute)
	if len(raw3) < 6 || raw3[0].Value != 0 {
		t.Fatalf("2.0: instance 3's series does not begin with the 0 at the start timestamp: %v", raw3)
	}
	start, at := raw3[0].Timestamp, raw3[5]
	inc := increaseSince(t, v2.prom, sel3, start, at.Timestamp)
	lo, _ := countAt(w3, at.Timestamp.Time().Add(-2*rwInterval))
	hi, _ := countAt(w3, at.Timestamp.Time().Add(rwInterval/2))
	if inc != float64(at.Value) || uint64(at.Value) < lo || uint64(at.Value) > hi {
		t.Errorf("2.0: increase() of instance 3 since its start = %v, want exactly the Write count %v (the simulator wrote %d..%d then)", inc, at.Value, lo, hi)
	}
	raw31 := restartSamples(t, v1.prom, sel3, 5*time.Minute)
	if len(raw31) < 5 || !raw31[0].Timestamp.After(start) || raw31[0].Value == 0 {
		t.Fatalf("1.0: instance 3's series: %v, want no sample at the start timestamp %s", raw31, start)
	}
	at1 := raw31[4]
	inc1 := increaseSince(t, v1.prom, sel3, start, at1.Timestamp)
	if inc1 >= float64(at1.Value) {
		t.Errorf("1.0: increase() of instance 3 since its start = %v, want short of the Write count %v", inc1, at1.Value)
	}
	t.Logf("instance 3, a new series; process start %s:\n"+
		"  2.0: samples from the 0 at the start, increase() to %s %v = the Write count %v (simulator: %d..%d)\n"+
		"  1.0: first sample %v at start+%v, increase() to %s %v, Write count %v: short by %.3f",
		start.Time().Format("15:04:05.000"), at.Timestamp.Time().Format("15:04:05.000"), inc, at.Value, lo, hi,
		raw31[0].Value, raw31[0].Timestamp.Sub(start), at1.Timestamp.Time().Format("15:04:05.000"), inc1, at1.Value, float64(at1.Value)-inc1)

	// Instance 2 restarted.
	t0 := time.Now()
	before := len(v2.writes.of(2))
	lastOld := latest(v2.prom)
	if err := v2.sim.Restart(2); err != nil {
		t.Fatal(err)
	}
	both("the new process's writes in both", func(v float64) bool { return v >= 6 && v < lastOld })
	time.Sleep(2 * rwInterval)
	oldFinal := v2.writes.of(2)[before].count
	window := time.Since(t0) + 10*time.Second
	for _, pp := range proms {
		raw := restartSamples(t, pp.p, sel2, window)
		d := dropIndex(t, raw)
		first, last := raw[0], raw[len(raw)-1]
		seen := float64(raw[d-1].Value-first.Value) + float64(last.Value)
		truth := float64(oldFinal) - float64(first.Value) + float64(last.Value)
		inc := increaseSince(t, pp.p, sel2, first.Timestamp, last.Timestamp)
		// The range begins 1 ms before the first sample: Prometheus
		// extrapolates over that millisecond, nothing more.
		if math.Abs(inc-seen) > 0.01 {
			t.Errorf("%s: increase() across the restart %v, want the samples' increase %v", pp.name, inc, seen)
		}
		if truth-seen < 0 || truth-seen > 3 {
			t.Errorf("%s: the samples miss %v writes of the old process; want 0..3 (sim interval 500ms, scrape 1s)", pp.name, truth-seen)
		}
		t.Logf("  %s across instance 2's restart: increase() %v, the simulator's %v (the old process's writes after its last scrape: %v); after the drop: %v",
			pp.name, inc, truth, truth-seen, raw[d:min(d+3, len(raw))])
	}
}

// restartSamples returns the raw samples of sel over window.
func restartSamples(t *testing.T, p *harness.Prometheus, sel string, window time.Duration) []model.SamplePair {
	t.Helper()
	m, err := p.RawSamples(context.Background(), sel, window.Truncate(time.Second)+time.Second, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return rawOf(t, m, sel)
}

// dropIndex is the index of the one sample below the one before it.
func dropIndex(t *testing.T, raw []model.SamplePair) int {
	t.Helper()
	drop := -1
	for i := 1; i < len(raw); i++ {
		if raw[i].Value < raw[i-1].Value {
			if drop >= 0 {
				t.Fatalf("the samples drop more than once: %v", raw)
			}
			drop = i
		}
	}
	if drop < 0 {
		t.Fatalf("the samples never drop: %v", raw)
	}
	return drop
}

// increaseSince is increase(sel) at end over the range that begins just
// before from (a range is open at its start).
func increaseSince(t *testing.T, p *harness.Prometheus, sel string, from, end model.Time) float64 {
	t.Helper()
	ms := int64(math.Max(1, float64(end.Sub(from).Milliseconds()+1)))
	v, err := p.ScalarAt(context.Background(), fmt.Sprintf("increase(%s[%dms])", sel, ms), end.Time())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

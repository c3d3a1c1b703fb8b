// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// TestRemoteWriteCounterReset: a restart of instance 2 is exactly one
// counter reset in Prometheus, and none for the other instances; the raw
// samples are values the simulator wrote, and the increase over the window
// is the simulator's, less only the writes of the old process that no
// scrape saw.
func TestRemoteWriteCounterReset(t *testing.T) {
	t.Parallel()
	r, _ := startRemoteWrite(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, LIF: false, Seed: 5})
	ctx := context.Background()
	const family = "ernic_stats_writes_total"

	latest := func(id string) float64 {
		v, err := r.prom.ScalarAt(ctx, fmt.Sprintf("%s{ernic_id=%q}", family, id), time.Now())
		if err != nil {
			return -1
		}
		return v
	}
	eventually(t, waitTimeout, "worker counters in Prometheus", func() []string {
		if latest("2") < 4 || latest("3") < 4 {
			return []string{fmt.Sprintf("writes of 2: %v, of 3: %v", latest("2"), latest("3"))}
		}
		return nil
	})
	t0 := time.Now()
	time.Sleep(4 * rwInterval)

	before := len(r.writes.of(2))
	lastOld := latest("2")
	if err := r.sim.Restart(2); err != nil {
		t.Fatal(err)
	}
	w2 := r.writes.of(2)
	// Restart logs the old process's shutdown write, then the new one's
	// startup write (Write count 0).
	if len(w2) < before+2 || w2[before+1].count != 0 {
		t.Fatalf("unexpected simulator writes of instance 2 around the restart: %v", w2[max(0, before-2):])
	}
	oldFinal := w2[before].count
	// The new process's samples: below the last one seen of the old
	// process (which only went up from there), and a few writes in.
	eventually(t, waitTimeout, "instance 2's new counters in Prometheus", func() []string {
		if v := latest("2"); v < 4 || v >= lastOld {
			return []string{fmt.Sprintf("%s{ernic_id=\"2\"} = %v (old process: %v in Prometheus at the restart, ended at %d)", family, v, lastOld, oldFinal)}
		}
		return nil
	})
	time.Sleep(2 * rwInterval)
	t1 := time.Now()
	window := t1.Sub(t0).Truncate(time.Second) + time.Second
	ws := fmt.Sprintf("%ds", int(window.Seconds()))

	// resets(): exactly one for instance 2, none elsewhere, for the write
	// count and byte counters, over the window and over 5m (all the data:
	// Prometheus is younger than that).
	for _, q := range []struct{ fam, rng string }{
		{family, "5m"}, {family, ws}, {"ernic_rdma_bytes_total", ws}, {"ernic_ip_bytes_tx_total", "5m"},
	} {
		fam, ws := q.fam, q.rng
		v, err := r.prom.Vector(ctx, fmt.Sprintf("resets(%s[%s])", fam, ws), t1)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, s := range v {
			got[string(s.Metric["ernic_id"])] = float64(s.Value)
		}
		want := map[string]float64{"1": 0, "2": 1, "3": 0}
		if fam != family {
			want = map[string]float64{"2": 1, "3": 0} // the manager has no traffic (its counters stay 0)
			delete(got, "1")
		}
		if !mapsEqual(got, want) {
			t.Errorf("resets(%s[%s]) by ernic_id = %v, want %v", fam, ws, got, want)
		} else {
			t.Logf("resets(%s[%s]) by ernic_id = %v", fam, ws, got)
		}
	}

	// The raw samples of instance 2 over the window.
	m, err := r.prom.RawSamples(ctx, fmt.Sprintf("%s{ernic_id=\"2\"}", family), window, t1)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawOf(t, m, "instance 2's write count")
	drop := dropIndex(t, raw)
	first, pre, post, lastV := float64(raw[0].Value), float64(raw[drop-1].Value), float64(raw[drop].Value), float64(raw[len(raw)-1].Value)
	// Every sample is a Write count the simulator had written, in that
	// process, by the sample's scrape (allowing for a scrape that read the
	// file just after its timestamp, or kept the last complete read).
	w2 = r.writes.of(2)
	gens := [][]simWrite{w2[:before+1], w2[before+1:]}
	for i, sp := range raw {
		gen := gens[0]
		if i >= drop {
			gen = gens[1]
		}
		at := sp.Timestamp.Time()
		lo, _ := countAt(gen, at.Add(-2*rwInterval))
		hi, ok := countAt(gen, at.Add(rwInterval/2))
		if v := uint64(sp.Value); !ok || v < lo || v > hi {
			t.Errorf("instance 2 sample %d at %s: the simulator's file held %d..%d around then", v, at.Format("15:04:05.000"), lo, hi)
		}
	}
	// The increase: what the simulator wrote from the first sample to the
	// last is (oldFinal - first) + last; the samples show (pre - first) +
	// last. The difference is the old process's writes after its last
	// scrape, which no scrape can see.
	truth := (float64(oldFinal) - first) + lastV
	seen := (pre - first) + lastV
	inc, err := r.prom.ScalarAt(ctx, fmt.Sprintf("increase(%s{ernic_id=\"2\"}[%s])", family, ws), t1)
	if err != nil {
		t.Fatal(err)
	}
	span := raw[len(raw)-1].Timestamp.Sub(raw[0].Timestamp).Seconds()
	// Prometheus extrapolates the increase from the samples' span to the
	// window, by at most 1.1 average sample intervals at each end.
	avg := span / float64(len(raw)-1)
	maxInc := seen * math.Min(window.Seconds(), span+2.2*avg) / span
	t.Logf("instance 2 over %s: %d raw samples, first %v, last before restart %v, old process's final write %d, "+
		"first after restart %v, last %v; simulator increase %v, samples' increase %v (missed at the restart %v), increase() %v (extrapolated; at most %v)",
		ws, len(raw), first, pre, oldFinal, post, lastV, truth, seen, truth-seen, inc, maxInc)
	if truth-seen < 0 || truth-seen > 3 {
		t.Errorf("the samples miss %v writes of the old process at the restart; want 0..3 (sim interval 500ms, scrape 1s)", truth-seen)
	}
	if inc < seen-0.001 || inc > maxInc+0.001 {
		t.Errorf("increase(...[%s]) = %v, want between the samples' increase %v and its extrapolation %v", ws, inc, seen, maxInc)
	}

	// Instance 3: no reset, and the samples' increase is the simulator's.
	m, err = r.prom.RawSamples(ctx, fmt.Sprintf("%s{ernic_id=\"3\"}", family), window, t1)
	if err != nil {
		t.Fatal(err)
	}
	raw3 := rawOf(t, m, "instance 3's write count")
	for i := 1; i < len(raw3); i++ {
		if raw3[i].Value < raw3[i-1].Value {
			t.Errorf("instance 3's write count went down: %v -> %v", raw3[i-1].Value, raw3[i].Value)
		}
	}
	w3 := r.writes.of(3)
	for _, sp := range raw3 {
		lo, _ := countAt(w3, sp.Timestamp.Time().Add(-2*rwInterval))
		hi, _ := countAt(w3, sp.Timestamp.Time().Add(rwInterval/2))
		if v := uint64(sp.Value); v < lo || v > hi {
			t.Errorf("instance 3 sample %d at %s: the simulator's file held %d..%d around then", v, sp.Timestamp.Time().Format("15:04:05.000"), lo, hi)
		}
	}
	inc3, _ := r.prom.ScalarAt(ctx, fmt.Sprintf("increase(%s{ernic_id=\"3\"}[%s])", family, ws), t1)
	t.Logf("instance 3 over %s: %d raw samples %v -> %v, increase() %v", ws, len(raw3), raw3[0].Value, raw3[len(raw3)-1].Value, inc3)
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

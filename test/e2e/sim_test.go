// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// value returns the value of the sample of family name whose labels include
// every pair of kv, and whether there is exactly one.
func value(mfs map[string]*dto.MetricFamily, name string, kv ...string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
	want := pairs(kv)
	var found []float64
	for _, m := range mf.GetMetric() {
		ok := true
		for k, v := range want {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == k {
					got = l.GetValue()
				}
			}
			ok = ok && got == v
		}
		if ok {
			found = append(found, sampleValue(m, mf.GetType()))
		}
	}
	if len(found) != 1 {
		return 0, false
	}
	return found[0], true
}

// TestSimulatorEndToEnd is `make run` as a test: ernic-sim rewrites a run
// directory in place at 5 Hz with live server processes, the collector
// serves it with config/local.yaml, and every family of the contract is
// there with moving counters. A restarted instance resets its counters in
// Prometheus; the others do not.
func TestSimulatorEndToEnd(t *testing.T) {
	harness.CollectorBinary(t)
	runDir := t.TempDir()
	s := harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 3, QPs: 4, Interval: 200 * time.Millisecond, LIF: true, Seed: 7})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	promPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	startCollector(t, runDir, promPort, healthPort)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort)

	// scrapeWhen polls until cond holds for a scrape, or fails the test.
	scrapeWhen := func(what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
		t.Helper()
		deadline := time.Now().Add(waitTimeout)
		for {
			mfs, err := harness.Scrape(ctx, url)
			if err == nil && cond(mfs) {
				return mfs
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s (last error %v)", what, waitTimeout, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	writes := func(mfs map[string]*dto.MetricFamily, id int) float64 {
		v, _ := value(mfs, "ernic_stats_writes_total", "ernic_id", strconv.Itoa(id))
		return v
	}

	first := scrapeWhen("every family of the contract, workers written to", func(mfs map[string]*dto.MetricFamily) bool {
		for _, f := range contract {
			if mfs[f.name] == nil {
				return false
			}
		}
		return writes(mfs, 2) >= 2 && writes(mfs, 3) >= 2
	})
	for id := 1; id <= 3; id++ {
		if up, ok := value(first, "ernic_instance_up", "ernic_id", strconv.Itoa(id)); !ok || up != 1 {
			t.Errorf("ernic_instance_up{ernic_id=%q} = %v, want 1 (live simulator child)", strconv.Itoa(id), up)
		}
	}

	// Counters move: a later scrape has more bytes and writes for the
	// workers, and never less of anything.
	later := scrapeWhen("worker counters moving", func(mfs map[string]*dto.MetricFamily) bool {
		return writes(mfs, 2) >= writes(first, 2)+3 && writes(mfs, 3) >= writes(first, 3)+3
	})
	for _, id := range []string{"2", "3"} {
		a, _ := value(first, "ernic_rdma_bytes_total", "ernic_id", id)
		b, _ := value(later, "ernic_rdma_bytes_total", "ernic_id", id)
		if !(b > a) {
			t.Errorf("ernic_rdma_bytes_total{ernic_id=%q}: %v then %v, want it to grow", id, a, b)
		}
	}

	// Restart instance 2: new pid, counters from zero.
	before := writes(later, 3)
	if err := s.Restart(2); err != nil {
		t.Fatal(err)
	}
	restarted := scrapeWhen("instance 2's counters back near zero", func(mfs map[string]*dto.MetricFamily) bool {
		w, ok := value(mfs, "ernic_stats_writes_total", "ernic_id", "2")
		return ok && w < writes(later, 2)
	})
	if w := writes(restarted, 3); w < before {
		t.Errorf("instance 3 was not restarted, yet its Write count went %v -> %v", before, w)
	}
	if up, _ := value(restarted, "ernic_instance_up", "ernic_id", "2"); up != 1 {
		t.Errorf("restarted instance 2 up = %v, want 1", up)
	}
	// Remove instance 3: its series leave /metrics at the next scrape (a
	// staleness marker), not after the exporter's expiry.
	if err := s.Remove(3); err != nil {
		t.Fatal(err)
	}
	removedAt := time.Now()
	scrapeWhen("instance 3's series gone from /metrics", func(mfs map[string]*dto.MetricFamily) bool {
		_, ok := value(mfs, "ernic_instance_up", "ernic_id", "3")
		_, okW := value(mfs, "ernic_stats_writes_total", "ernic_id", "3")
		return !ok && !okW
	})
	gone := time.Since(removedAt)
	if gone > 10*time.Second {
		t.Errorf("instance 3's series took %s to leave /metrics; want about one collection interval (1s)", gone)
	}
	t.Logf("simulator e2e: %d families served; instance 2 writes %v before restart, %v after; instance 3 %v -> %v; instance 3's series gone %s after its removal",
		len(first), writes(later, 2), writes(restarted, 2), before, writes(restarted, 3), gone.Round(100*time.Millisecond))
}

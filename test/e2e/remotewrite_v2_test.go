// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// rwV2Override turns remote write 2.0 on, over rwOverride.
const rwV2Override = `exporters:
  remote_write:
    protobuf_message: io.prometheus.write.v2.Request
`

// startPrometheus3 starts Prometheus 3 with the remote-write receiver and
// flags.
func startPrometheus3(t *testing.T, flags ...string) *harness.Prometheus {
	t.Helper()
	return harness.StartPrometheus(t, harness.Prometheus3Binary(t), "", time.Minute, harness.RemoteWriteConfig,
		append([]string{"--web.enable-remote-write-receiver"}, flags...)...)
}

// withV2 makes r's collector send remote write 2.0.
func (r *rwSetup) withV2() {
	r.args = append(r.args, "--config", harness.WriteFile(r.t, "rw-v2.yaml", rwV2Override))
}

// lastWritesEqualSim stops the simulator and waits until Prometheus holds
// each instance's final Write count.
func lastWritesEqualSim(t *testing.T, r *rwSetup, ids []string) {
	t.Helper()
	ctx := context.Background()
	if err := r.sim.Stop(); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, "the simulator's final write in Prometheus", func() []string {
		var problems []string
		for _, id := range ids {
			n, _ := strconv.Atoi(id)
			snap, ok := r.sim.Snapshot(n)
			sel := fmt.Sprintf(`last_over_time(ernic_stats_writes_total{ernic_id=%q}[1m])`, id)
			got, err := r.prom.ScalarAt(ctx, sel, time.Now())
			if !ok || err != nil || got != float64(snap.WriteCount) {
				problems = append(problems, fmt.Sprintf("%s = %v (%v), want the final Write count %d", sel, got, err, snap.WriteCount))
			}
		}
		return problems
	})
}

// TestRemoteWriteV2IntoPrometheus3: with remote write 2.0, every family of
// the contract reaches Prometheus 3 with exactly its labels and its values,
// and Prometheus stores each series' type and unit from the 2.0 metadata
// (type-and-unit-labels shows them as __type__ and __unit__; Prometheus
// 3's /api/v1/metadata lists scraped targets' metadata only).
func TestRemoteWriteV2IntoPrometheus3(t *testing.T) {
	t.Parallel()
	harness.CollectorBinary(t)
	prom := startPrometheus3(t, "--enable-feature=type-and-unit-labels")
	r := newRemoteWriteTo(t, sim.Options{Instances: 3, QPs: 4, Interval: 500 * time.Millisecond, LIF: true, Seed: 11}, prom)
	r.withV2()
	c := r.startCollector()
	ctx := context.Background()
	all, workers := []string{"1", "2", "3"}, []string{"2", "3"}
	types := map[string]string{}
	for _, f := range append(contract, beyondContract...) {
		types[f.name] = strings.ToLower(f.typ.String())
	}
	eventually(t, waitTimeout, "every family with its labels, type and unit", func() []string {
		v, err := r.prom.Vector(ctx, `{__name__=~"ernic_.+"}`, time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		var problems []string
		for _, s := range v {
			name := string(s.Metric[model.MetricNameLabel])
			if got := string(s.Metric["__type__"]); got != types[name] {
				problems = append(problems, fmt.Sprintf("%s: __type__ %q, want %q", name, got, types[name]))
			}
			unit := string(s.Metric["__unit__"])
			switch base := strings.TrimSuffix(name, "_total"); {
			case strings.HasSuffix(base, "_seconds") && unit != "seconds",
				strings.HasSuffix(base, "_bytes") && unit != "bytes":
				problems = append(problems, fmt.Sprintf("%s: __unit__ %q", name, unit))
			}
			delete(s.Metric, "__type__")
			delete(s.Metric, "__unit__")
		}
		return append(problems, checkRemoteWritten(v, workers, all)...)
	})
	lastWritesEqualSim(t, r, all)
	if bad := prom.RequestsNot2xx(t, "/api/v1/write"); len(bad) > 0 {
		t.Errorf("Prometheus 3 answered remote write 2.0 with %v", bad)
	}
	if strings.Contains(c.Log.String(), "does not take remote write 2.0") {
		t.Errorf("the collector fell back to 1.0 with Prometheus 3:\n%s", c.Log.String())
	}
}

// TestRemoteWriteV2FallsBackTo1: a receiver that does not take 2.0 gets
// the same samples as 1.0, the first request included, and the collector
// says so once: Prometheus 3 told to accept 1.0 only answers 415; Debian's
// Prometheus 2.42 answers 204 without the written headers (it reads the
// 2.0 message as an empty 1.0 one).
func TestRemoteWriteV2FallsBackTo1(t *testing.T) {
	t.Parallel()
	harness.CollectorBinary(t)
	for name, start := range map[string]func(t *testing.T) *harness.Prometheus{
		"prometheus3-v1-only": func(t *testing.T) *harness.Prometheus {
			return startPrometheus3(t, "--web.remote-write-receiver.accepted-protobuf-messages=prometheus.WriteRequest")
		},
		"prometheus2.42": func(t *testing.T) *harness.Prometheus { return harness.StartRemoteWritePrometheus(t, "", "1d") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prom := start(t)
			r := newRemoteWriteTo(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, Seed: 3}, prom)
			r.withV2()
			c := r.startCollector()
			lastWritesEqualSim(t, r, []string{"1", "2", "3"})
			if n := strings.Count(c.Log.String(), "does not take remote write 2.0"); n != 1 {
				t.Errorf("the fallback logged %d times, want once:\n%s", n, c.Log.String())
			}
			mfs, err := harness.Scrape(context.Background(), prom.URL("/metrics"))
			if err != nil {
				t.Fatal(err)
			}
			codes := map[string]float64{}
			for _, m := range mfs["prometheus_http_requests_total"].GetMetric() {
				var handler, code string
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "handler":
						handler = l.GetValue()
					case "code":
						code = l.GetValue()
					}
				}
				if handler == "/api/v1/write" && m.GetCounter().GetValue() > 0 {
					codes[code] = m.GetCounter().GetValue()
				}
			}
			for _, line := range strings.Split(c.Log.String(), "\n") {
				if strings.Contains(line, "does not take remote write 2.0") {
					t.Logf("%s: write answers by code %v; collector: %s", name, codes, line)
				}
			}
			if name == "prometheus3-v1-only" && codes["415"] != 1 {
				t.Errorf("Prometheus 3 (1.0 only) answered %v, want one 415", codes)
			}
		})
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The remote-write tests run config/prometheus-remote-write.yaml as shipped,
// with a 1s scrape, against a real Prometheus (Debian's 2.42) with its
// remote-write receiver on, and query what Prometheus stored. The simulator
// runs in the test process (internal/sim). Each test has its own simulator,
// collector, Prometheus, ports and directories, so they run in parallel.

// rwInterval is the collection interval of the remote-write tests.
const rwInterval = time.Second

// rwOverride is merged over config/prometheus-remote-write.yaml: a 1s
// scrape with the per-opcode metric on (every family of the contract) and a
// short merge window, so that a sample is in Prometheus about 1s after its
// scrape (and a kill loses no more than with a 5s scrape and the shipped
// 2s).
const rwOverride = opcodeReceiver + `exporters:
  remote_write:
    merge_window: 200ms
`

// TestRemoteWriteContract: every family of the metric contract reaches
// Prometheus by remote write with exactly its labels; worker counters have
// a rate; after the simulator's final write, the last values in Prometheus
// are the simulator's, for device, QP and LIF counters.
func TestRemoteWriteContract(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r, _ := startRemoteWrite(t, sim.Options{Instances: 3, QPs: 4, Interval: 500 * time.Millisecond, LIF: true, Seed: 11})
	ctx := context.Background()
	all, workers := []string{"1", "2", "3"}, []string{"2", "3"}

	var families int
	eventually(t, waitTimeout, "every family of the contract in Prometheus with its labels", func() []string {
		v, err := r.prom.Vector(ctx, `{__name__=~"ernic_.+"}`, time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		names := map[model.LabelValue]bool{}
		for _, s := range v {
			names[s.Metric[model.MetricNameLabel]] = true
		}
		families = len(names)
		return checkRemoteWritten(v, workers, all)
	})
	t.Logf("remote write: %d ernic_* families in Prometheus (contract %d + beyond %d), labels exact, after %v",
		families, len(contract), len(beyondContract), time.Since(start).Round(time.Millisecond))
	// Nothing else was written but the delivery telemetry, under the same
	// job and instance: no target_info, no other series (this Prometheus
	// scrapes nothing, not even itself).
	if v, err := r.prom.Vector(ctx, `{__name__=~".+",__name__!~"ernic_.+|otelcol_delivery_.+|otelcol_build_info"}`, time.Now()); err != nil || len(v) > 0 {
		t.Errorf("series other than ernic_* and the delivery telemetry in Prometheus (%v): %v", err, v)
	}
	hostName, _ := os.Hostname()
	build := fmt.Sprintf(`otelcol_build_info{job="ernic", instance=%q, version=%q}`, hostName, harness.CollectorVersion(t))
	if got, err := r.prom.ScalarAt(ctx, build, time.Now()); err != nil || got != 1 {
		t.Errorf("%s = %v (%v), want 1", build, got, err)
	}
	checkDeliveryFamilies(t, ctx, r.prom, hostName)
	for q, want := range map[string]float64{"ernic_instances": 3, "ernic_vms": 2} {
		if got, err := r.prom.ScalarAt(ctx, q, time.Now()); err != nil || got != want {
			t.Errorf("%s = %v (%v), want %v", q, got, err, want)
		}
	}

	eventually(t, waitTimeout, "rate(ernic_rdma_bytes_total[30s]) > 0 for the workers", func() []string {
		v, err := r.prom.Vector(ctx, `rate(ernic_rdma_bytes_total[30s]) > 0`, time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		var problems []string
		for _, id := range workers {
			if !slices.ContainsFunc(v, func(s *model.Sample) bool { return string(s.Metric["ernic_id"]) == id }) {
				problems = append(problems, fmt.Sprintf("no rate > 0 for ernic_id=%s: %v", id, v))
			}
		}
		return problems
	})

	// The simulator's last write, then its values in Prometheus.
	if err := r.sim.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	snaps := map[string]sim.Stats{}
	for _, id := range all {
		n, _ := strconv.Atoi(id)
		st, ok := r.sim.Snapshot(n)
		if !ok {
			t.Fatalf("no snapshot of instance %s", id)
		}
		snaps[id] = st
	}
	last := func(selector string) (float64, error) {
		return r.prom.ScalarAt(ctx, fmt.Sprintf("last_over_time(%s[1m])", selector), time.Now())
	}
	eventually(t, waitTimeout, "the simulator's final write in Prometheus", func() []string {
		var problems []string
		for _, id := range all {
			sel := fmt.Sprintf(`ernic_stats_writes_total{ernic_id=%q}`, id)
			got, err := last(sel)
			if want := float64(snaps[id].WriteCount); err != nil || got != want {
				problems = append(problems, fmt.Sprintf("%s = %v (%v), want the final Write count %v", sel, got, err, want))
			}
		}
		return problems
	})
	t.Logf("final write in Prometheus %v after sim.Stop", time.Since(stopped).Round(time.Millisecond))

	compared := 0
	compare := func(selector string, want uint64) {
		t.Helper()
		got, err := last(selector)
		switch {
		case err != nil:
			t.Errorf("%s: %v", selector, err)
		case got != float64(want):
			t.Errorf("%s = %v in Prometheus, the simulator wrote %d", selector, got, want)
		}
		compared++
	}
	for _, id := range workers {
		d := snaps[id].Device
		sel := func(family string, more ...string) string {
			l := fmt.Sprintf("ernic_id=%q", id)
			for i := 0; i+1 < len(more); i += 2 {
				l += fmt.Sprintf(",%s=%q", more[i], more[i+1])
			}
			return family + "{" + l + "}"
		}
		compare(sel("ernic_rdma_bytes_sent_total"), d.BytesSent)
		compare(sel("ernic_rdma_bytes_write_total"), d.BytesRDMAWrite)
		compare(sel("ernic_rdma_bytes_total"), d.BytesSent+d.BytesReceived+d.BytesRDMARead+d.BytesRDMAWrite)
		compare(sel("ernic_ip_bytes_total"), d.IPBytesTx+d.IPBytesRx)
		compare(sel("ernic_commands_total"), d.Commands)
		compare(sel("ernic_mmio_reads_total"), d.Bar0Reads+d.UARReads)
		compare(sel("ernic_flr_reset_total"), d.ResetCount)
		if len(snaps[id].QPs) == 0 {
			t.Errorf("instance %s: no QPs in the final snapshot", id)
		}
		for _, q := range snaps[id].QPs {
			h := strconv.FormatUint(uint64(q.Handle), 10)
			compare(sel("ernic_qp_bytes_sent_total", "qp", h), q.BytesSent)
			compare(sel("ernic_qp_wqes_processed_total", "qp", h), q.WQEsProcessed)
			compare(sel("ernic_qp_doorbell_send_total", "qp", h), q.DoorbellSend)
		}
		if len(snaps[id].LIF) == 0 {
			t.Errorf("instance %s: no LIF counters in the final snapshot", id)
		}
		for i, c := range snaps[id].LIF {
			if i%10 == 0 || c.Name == "rx_ucast_bytes" {
				compare(sel("ernic_lif_counter_total", "counter", c.Name), c.Value)
			}
		}
	}
	t.Logf("%d last values in Prometheus equal the simulator's final snapshot (device, QP and LIF counters of both workers)", compared)
}

// rawOf returns the single series' samples of a range query result.
func rawOf(t *testing.T, m model.Matrix, what string) []model.SamplePair {
	t.Helper()
	if len(m) != 1 {
		t.Fatalf("%s: %d series, want 1: %v", what, len(m), m)
	}
	return m[0].Values
}

// countAt returns the Write count instance id's file held at time at (the
// last write completed before it), from the simulator's log.
func countAt(writes []simWrite, at time.Time) (uint64, bool) {
	i := sort.Search(len(writes), func(i int) bool { return writes[i].at.After(at) })
	if i == 0 {
		return 0, false
	}
	return writes[i-1].count, true
}

// deliveryLabels are the labels of each family of the delivery telemetry
// that a healthy remote write always has, beside job and instance.
var deliveryLabels = map[string][]string{
	"otelcol_delivery_points_sent_total":               {"exporter"},
	"otelcol_delivery_bytes_sent_total":                {"exporter"},
	"otelcol_delivery_points_dropped_total":            {"exporter", "reason"},
	"otelcol_delivery_points_not_written_total":        {"exporter"},
	"otelcol_delivery_queue_points":                    {"exporter"},
	"otelcol_delivery_queue_bytes":                     {"exporter"},
	"otelcol_delivery_queue_capacity":                  {"exporter", "sizer"},
	"otelcol_delivery_queued_newest_timestamp_seconds": {"exporter"},
	"otelcol_delivery_sent_newest_timestamp_seconds":   {"exporter"},
	"otelcol_build_info":                               {"version"},
}

// checkDeliveryFamilies: the delivery telemetry of the shipped
// remote-write configuration is in Prometheus, every family with exactly
// its labels and the host's job and instance, exporter="remote_write".
func checkDeliveryFamilies(t *testing.T, ctx context.Context, p *harness.Prometheus, host string) {
	t.Helper()
	eventually(t, waitTimeout, "the delivery telemetry in Prometheus", func() []string {
		v, err := p.Vector(ctx, `{__name__=~"otelcol_.+"}`, time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		var problems []string
		seen := map[string]bool{}
		for _, s := range v {
			name := string(s.Metric[model.MetricNameLabel])
			seen[name] = true
			want, ok := deliveryLabels[name]
			if !ok {
				continue // a retry or rejection reason, or the oldest queued time
			}
			var got []string
			for l := range s.Metric {
				if l != model.MetricNameLabel {
					got = append(got, string(l))
				}
			}
			want = append(slices.Clone(want), "instance", "job")
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) || s.Metric["instance"] != model.LabelValue(host) || s.Metric["job"] != "ernic" ||
				(s.Metric["exporter"] != "" && s.Metric["exporter"] != "remote_write") {
				problems = append(problems, fmt.Sprintf("%s: want the labels %v, instance %q, job ernic, exporter remote_write", s.Metric, want, host))
			}
		}
		for name := range deliveryLabels {
			if !seen[name] {
				problems = append(problems, name+": missing")
			}
		}
		return problems
	})
}

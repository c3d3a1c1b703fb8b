// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// The check of an exposition against the metric contract and the fixtures.

// sample is one expected series: its labels and value. A value check other
// than equality is given by within (inclusive bounds).
type sample struct {
	labels map[string]string
	value  float64
	within *[2]float64
}

// expected returns, for each family, the exact series the fixtures must
// produce.
func expected(insts []*instanceFixture, now time.Time) map[string][]sample {
	want := map[string][]sample{}
	add := func(name string, value float64, labels ...string) {
		want[name] = append(want[name], sample{labels: pairs(labels), value: value})
	}
	addWithin := func(name string, lo, hi float64, labels ...string) {
		want[name] = append(want[name], sample{labels: pairs(labels), within: &[2]float64{lo, hi}})
	}
	ownAge := now.Sub(ownStart()).Seconds()
	vms := 0
	for _, f := range insts {
		id, role := strconv.Itoa(f.id), f.role
		idRole := []string{"ernic_id", id, "role", role}
		with := func(more ...string) []string { return append(slices.Clone(idRole), more...) }

		// Instance and VM. Both pids are this test process: alive.
		add("ernic_instance_up", 1, with("mac", f.mac)...)
		addWithin("ernic_instance_uptime_seconds", ownAge-5, ownAge+waitTimeout.Seconds()+30, idRole...)
		if f.vm != nil {
			vms++
			add("ernic_vm_attached", 1, with("vm_name", f.vm.name)...)
			gpu := 0.0
			if f.vm.gpu != "" {
				gpu = 1
			}
			add("ernic_vm_gpu_passthrough", gpu, idRole...)
			age := float64(now.UnixMilli())/1000 - f.vm.launchedAt
			addWithin("ernic_vm_uptime_seconds", age-5, age+waitTimeout.Seconds()+30, idRole...)
		} else {
			add("ernic_vm_attached", 0, with("vm_name", "")...)
		}

		// Device.
		up := 0.0
		if strings.HasPrefix(f.connection, "connected") {
			up = 1
		}
		add("ernic_connection_up", up, with("state", f.connection)...)
		add("ernic_qp_count", float64(len(f.qps)), idRole...)
		add("ernic_qp_unpublished", 0, idRole...)
		add("ernic_labels_truncated", 0, idRole...)
		addWithin("ernic_stats_age_seconds", 0, waitTimeout.Seconds()+30, idRole...)
		add("ernic_stats_writes_total", float64(f.writeCount), idRole...)
		for family, key := range map[string]string{
			"ernic_ip_bytes_tx_total":         "total_ip_bytes_tx",
			"ernic_ip_bytes_rx_total":         "total_ip_bytes_rx",
			"ernic_rdma_bytes_sent_total":     "total_bytes_sent",
			"ernic_rdma_bytes_received_total": "total_bytes_received",
			"ernic_rdma_bytes_read_total":     "total_bytes_rdma_read",
			"ernic_rdma_bytes_write_total":    "total_bytes_rdma_write",
			"ernic_flr_reset_total":           "reset_count",
			"ernic_commands_total":            "commands",
			"ernic_interrupts_total":          "interrupts",
			"ernic_mmio_reads_total":          "mmio_reads_total",
			"ernic_mmio_writes_total":         "mmio_writes_total",
		} {
			add(family, float64(f.dev(key)), idRole...)
		}
		add("ernic_rdma_bytes_total", float64(f.dev("total_bytes_sent")+f.dev("total_bytes_received")+
			f.dev("total_bytes_rdma_read")+f.dev("total_bytes_rdma_write")), idRole...)
		add("ernic_ip_bytes_total", float64(f.dev("total_ip_bytes_tx")+f.dev("total_ip_bytes_rx")), idRole...)
		for _, c := range slices.Concat(f.deviceLIF, f.lif) {
			add("ernic_lif_counter_total", float64(c.value), with("counter", c.name)...)
		}

		// Per QP.
		for _, q := range f.qps {
			qp := with("qp", strconv.FormatUint(uint64(q.handle), 10))
			add("ernic_qp_doorbell_send_total", float64(q.doorbellSend), qp...)
			add("ernic_qp_doorbell_recv_total", float64(q.doorbellRecv), qp...)
			add("ernic_qp_wqes_processed_total", float64(q.wqesProcessed), qp...)
			add("ernic_qp_cqes_posted_total", float64(q.cqesPosted), qp...)
			add("ernic_qp_bytes_sent_total", float64(q.bytesSent), qp...)
			add("ernic_qp_bytes_received_total", float64(q.bytesReceived), qp...)
			add("ernic_qp_bytes_rdma_read_total", float64(q.bytesRDMARead), qp...)
			add("ernic_qp_bytes_rdma_write_total", float64(q.bytesRDMAWrite), qp...)
			for _, op := range q.opcodes {
				add("ernic_qp_wqes_by_opcode_total", float64(op.value), append(slices.Clone(qp), "opcode", op.name)...)
			}
			// A wrapped `(other opcodes)` (above 2^63-1) is not published.
			if q.hasOther && q.other <= math.MaxInt64 {
				add("ernic_qp_wqes_by_opcode_total", float64(q.other), append(slices.Clone(qp), "opcode", "other")...)
			}
		}
	}
	add("ernic_instances", float64(len(insts)))
	add("ernic_instances_unpublished", 0)
	add("ernic_vms", float64(vms))
	add("ernic_run_dir_readable", 1)
	return want
}

func pairs(kv []string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// check compares the exposition with the contract and the expected series;
// it returns every difference found.
func check(mfs map[string]*dto.MetricFamily, want map[string][]sample) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	known := map[string]bool{}
	for _, f := range slices.Concat(contract, beyondContract) {
		known[f.name] = true
		mf, ok := mfs[f.name]
		if !ok {
			bad("%s: family missing", f.name)
			continue
		}
		if mf.GetType() != f.typ {
			bad("%s: type %s, want %s", f.name, mf.GetType(), f.typ)
		}
		wantLabels := slices.Sorted(slices.Values(f.labels))
		got := map[string]*dto.Metric{}
		for _, m := range mf.GetMetric() {
			var names []string
			for _, lp := range m.GetLabel() {
				names = append(names, lp.GetName())
			}
			sort.Strings(names)
			if !slices.Equal(names, wantLabels) {
				bad("%s%s: labels %v, want exactly %v", f.name, labelString(m), names, wantLabels)
			}
			got[labelString(m)] = m
		}
		if len(mf.GetMetric()) == 0 {
			bad("%s: family has no samples", f.name)
		}

		// Exactly the expected series, with their values.
		wantKeys := map[string]bool{}
		for _, s := range want[f.name] {
			key := labelMapString(s.labels)
			wantKeys[key] = true
			m, ok := got[key]
			if !ok {
				bad("%s%s: series missing", f.name, key)
				continue
			}
			v := sampleValue(m, f.typ)
			switch {
			case s.within != nil && (v < s.within[0] || v > s.within[1]):
				bad("%s%s = %v, want within [%v, %v]", f.name, key, v, s.within[0], s.within[1])
			case s.within == nil && v != s.value:
				bad("%s%s = %v, want %v", f.name, key, v, s.value)
			}
		}
		for key := range got {
			if !wantKeys[key] {
				bad("%s%s: unexpected series", f.name, key)
			}
		}
	}
	for name := range mfs {
		if strings.HasPrefix(name, "ernic_") && !known[name] {
			bad("%s: family not in the metric contract (add a row to docs/metrics.md and beyondContract)", name)
		}
	}
	sort.Strings(problems)
	return problems
}

func sampleValue(m *dto.Metric, typ dto.MetricType) float64 {
	if typ == counter {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func labelString(m *dto.Metric) string {
	l := map[string]string{}
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return labelMapString(l)
}

func labelMapString(l map[string]string) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range l {
			if !yield(k) {
				return
			}
		}
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, l[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func formatFamilies(mfs map[string]*dto.MetricFamily) string {
	var b bytes.Buffer
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range mfs {
			if !yield(k) {
				return
			}
		}
	})
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(&b, mfs[n]); err != nil {
			fmt.Fprintf(&b, "# %s: %v\n", n, err)
		}
	}
	return b.String()
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// guestTextfile is what the guests' RDMA and GPU exporters publish, in
// their names and labels (dashboards.GuestMetrics), served here through
// node_exporter's textfile collector.
const guestTextfile = `rdma_port_rcv_data_total{device="ionic_0",port="1"} 262144
rdma_port_xmit_data_total{device="ionic_0",port="1"} 131072
rdma_port_rcv_packets_total{device="ionic_0",port="1"} 4096
rdma_port_xmit_packets_total{device="ionic_0",port="1"} 2048
gpu_junction_temperature{gpu_id="0",hostname="vm1"} 61
gpu_edge_temperature{gpu_id="0",hostname="vm1"} 48
gpu_gfx_activity{gpu_id="0",hostname="vm1"} 37
gpu_power_usage{gpu_id="0",hostname="vm1"} 412
gpu_clock{gpu_id="0",hostname="vm1",clock_type="GPU_CLOCK_TYPE_SYSTEM",clock_index="0"} 1533
pcie_bandwidth{gpu_id="0",hostname="vm1"} 8200
`

// netnsGuest makes a network namespace that stands for a VM: a veth pair to
// the test's namespace (guest 10.231.0.2, this side 10.231.0.1) and the
// guest's rocm-ernic0, one end of a veth pair inside it (the kernels
// here lack the dummy link type). It returns the namespace's name
// and removes it when the test ends.
func netnsGuest(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("ernic-vm-%d", os.Getpid())
	hostIf, guestIf := fmt.Sprintf("ev%dh", os.Getpid()%100000), fmt.Sprintf("ev%dg", os.Getpid()%100000)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", hostIf).Run()
		_ = exec.Command("ip", "netns", "del", ns).Run()
	})
	run("link", "add", hostIf, "type", "veth", "peer", "name", guestIf)
	run("link", "set", guestIf, "netns", ns)
	run("addr", "add", "10.231.0.1/30", "dev", hostIf)
	run("link", "set", hostIf, "up")
	for _, args := range [][]string{
		{"addr", "add", "10.231.0.2/30", "dev", guestIf},
		{"link", "set", guestIf, "up"},
		{"link", "set", "lo", "up"},
		{"link", "add", "rocm-ernic0", "type", "veth", "peer", "name", "rocm-ernic0p"},
		{"link", "set", "rocm-ernic0", "up"},
	} {
		run(append([]string{"-n", ns}, args...)...)
	}
	return ns
}

// nodeExporterBinary returns node_exporter: $NODE_EXPORTER_BIN, else
// Debian's prometheus-node-exporter (1.5.0 on bookworm; .ci/run installs
// it).
func nodeExporterBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("NODE_EXPORTER_BIN"); p != "" {
		return p
	}
	for _, name := range []string{"prometheus-node-exporter", "node_exporter"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the VM row test needs node_exporter: apt-get install prometheus-node-exporter (.ci/run does) or set NODE_EXPORTER_BIN")
	return ""
}

// TestVMRow: every query of the dashboard's VM metrics row, and its
// variables, return series from the exporters it was written against: a
// real node_exporter in a network namespace standing for a guest (with its
// rocm-ernic0 interface), and the RDMA and GPU exporters' names and labels
// through that node_exporter's textfile collector, scraped by a real
// Prometheus under the jobs ernic-vm-node, ernic-vm-rdma and ernic-vm-gpu.
func TestVMRow(t *testing.T) {
	harness.RequireRoot(t, "make the guest's network namespace (ip netns add)")
	ctx := context.Background()
	board, err := dashboards.LoadDashboard(filepath.Join(harness.RepoRoot(t), dashboards.DashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	ns := netnsGuest(t)
	textDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(textDir, "guest.prom"), []byte(guestTextfile), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &harness.LockedBuffer{}
	ne := exec.Command("ip", "netns", "exec", ns, nodeExporterBinary(t),
		"--web.listen-address=10.231.0.2:9100", "--collector.textfile.directory="+textDir)
	ne.Stdout, ne.Stderr = log, log
	if err := ne.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ne.Process.Kill()
		_ = ne.Wait()
		if t.Failed() {
			t.Logf("node_exporter log:\n%s", log.String())
		}
	})
	job := func(name, keep string) string {
		return fmt.Sprintf("  - job_name: %s\n    static_configs:\n      - targets: ['10.231.0.2:9100']\n    metric_relabel_configs:\n      - source_labels: [__name__]\n        regex: '%s'\n        action: keep\n", name, keep)
	}
	p := harness.StartPrometheus(t, harness.PrometheusBinary(t), "", 60*time.Second, "global:\n  scrape_interval: 1s\nscrape_configs:\n"+
		job("ernic-vm-node", "node_.*")+job("ernic-vm-rdma", "rdma_.*")+job("ernic-vm-gpu", "gpu_.*|pcie_.*"))

	vars := dashboards.Vars{RateInterval: "4s", Interval: "1s", Range: "30s"}
	checked := 0
	eventually(t, waitTimeout, "every VM row query with series", func() []string {
		var problems []string
		checked = 0
		for _, q := range board.Queries {
			if !dashboards.GuestQuery(q) {
				continue
			}
			checked++
			expr, err := dashboards.Substitute(q.Expr, vars)
			if err != nil {
				t.Fatal(err)
			}
			v, err := p.Vector(ctx, expr, time.Now())
			if err != nil || len(v) == 0 {
				problems = append(problems, fmt.Sprintf("%s: %d series (%v)\n%s", q.Where, len(v), err, expr))
			}
		}
		return problems
	})
	if checked < 14 {
		t.Errorf("%d VM row queries checked, want at least 14", checked)
	}
	t.Logf("%d queries of the VM metrics row and its variables return series from node_exporter (rocm-ernic0 in the guest namespace) and the RDMA and GPU exporters' names", checked)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// kv is one `name : value` line of a stats file.
type kv struct {
	name  string
	value uint64
}

// qpFixture is one `QP <handle>:` block.
type qpFixture struct {
	handle uint32
	// The eight QP counters, in the order the server prints them.
	doorbellSend, doorbellRecv, wqesProcessed, cqesPosted   uint64
	bytesSent, bytesReceived, bytesRDMARead, bytesRDMAWrite uint64
	// opcodes are the `WQEs by opcode:` lines.
	opcodes []kv
	// other is the `(other opcodes)` line when hasOther.
	other    uint64
	hasOther bool
}

// vmFixture is a manifest `vm` object of a launched VM.
type vmFixture struct {
	name       string
	gpu        string
	launchedAt float64
	pid        int
}

// instanceFixture is one manifest instance and its <id>.stats file.
type instanceFixture struct {
	id   int
	role string
	pid  int
	mac  string
	vm   *vmFixture // nil: "vm": null

	connection string
	writeCount uint64
	// device are the 15 `Device Statistics:` counters, in server order.
	device []kv
	// deviceLIF are LIF counters printed at device level (no LIF header).
	deviceLIF []kv
	qps       []qpFixture
	// trailer is a section a server fork appends after the QP blocks; its
	// keys are nobody's metrics.
	trailer string
	// lif is the `LIF Statistics:` section; nil when the server prints none.
	lif []kv
}

// dev returns the value of a device counter of the fixture.
func (f *instanceFixture) dev(name string) uint64 {
	for _, c := range f.device {
		if c.name == name {
			return c.value
		}
	}
	panic("fixture has no device counter " + name)
}

// fixtures returns the two instances of the e2e run directory: a manager
// without a VM and a worker with a launched VM. Both pids are the test
// process's own, so that /proc shows them alive. Every value is distinct and
// below 2^53 (exact as a float64 sample value).
func fixtures(now time.Time) []*instanceFixture {
	pid := os.Getpid()
	device := func(base uint64) []kv {
		out := make([]kv, len(sim.DeviceKeys))
		for i, n := range sim.DeviceKeys {
			out[i] = kv{n, base + uint64(i)*1009}
		}
		return out
	}
	manager := &instanceFixture{
		id: 1, role: "manager", pid: pid, mac: "02:aa:00:00:00:01",
		connection: "disconnected (client closed)",
		writeCount: 17,
		device:     device(100),
		// A known LIF counter printed at device level is a LIF counter.
		deviceLIF: []kv{{"tx_rdma_cnp_packets", 5}},
		qps: []qpFixture{{
			handle: 1, doorbellSend: 11, doorbellRecv: 12, wqesProcessed: 13, cqesPosted: 14,
			bytesSent: 15, bytesReceived: 16, bytesRDMARead: 17, bytesRDMAWrite: 18,
			opcodes: []kv{{"SEND", 10}, {"RDMA_WRITE", 6}},
			// 13 - (10 + 6) wrapped in uint64: garbage, must not be published.
			other: 18446744073709551613, hasOther: true,
		}},
	}
	worker := &instanceFixture{
		id: 2, role: "worker", pid: pid, mac: "02:AA:00:00:00:02",
		vm: &vmFixture{
			name: "train-a", gpu: "0000:c1:00.0",
			launchedAt: float64(now.Add(-time.Hour).UnixMilli())/1000 - 0.25,
			pid:        pid,
		},
		connection: "connected (PCI FLR)",
		writeCount: 3071,
		device: []kv{
			{"commands", 211}, {"bar0_reads", 48810}, {"bar0_writes", 17020},
			{"uar_reads", 0}, {"uar_writes", 29931}, {"mmio_reads_total", 48810},
			{"mmio_writes_total", 46951}, {"interrupts", 10440}, {"reset_count", 1},
			{"total_bytes_sent", 2097152}, {"total_bytes_received", 1048576},
			{"total_bytes_rdma_read", 4194304}, {"total_bytes_rdma_write", 8388608},
			{"total_ip_bytes_tx", 512044}, {"total_ip_bytes_rx", 498230},
		},
		qps: []qpFixture{
			{
				handle: 9, doorbellSend: 512, doorbellRecv: 256, wqesProcessed: 771, cqesPosted: 768,
				bytesSent: 2097152, bytesReceived: 1048576, bytesRDMARead: 0, bytesRDMAWrite: 8388608,
				opcodes: []kv{{"RDMA_WRITE", 256}, {"SEND", 512}},
				other:   3, hasOther: true,
			},
			{
				handle: 4, doorbellSend: 0, doorbellRecv: 32, wqesProcessed: 32, cqesPosted: 33,
				bytesSent: 0, bytesReceived: 0, bytesRDMARead: 4194304, bytesRDMAWrite: 0,
				opcodes: []kv{{"RDMA_READ", 32}},
			},
		},
		// A fork's section after the QP blocks: it closes QP 4, so its
		// bytes_sent is not QP 4's.
		trailer: "Fork Statistics:\n  bytes_sent     : 999999\n  fork_events    : 3\n",
		lif: []kv{
			{"rx_ucast_bytes", 7340032}, {"rx_ucast_packets", 5120},
			{"tx_ucast_bytes", 6291456}, {"tx_ucast_packets", 4096},
			{"rx_dma_error", 0}, {"tx_rdma_ucast_packets", 2048},
			{"rdma_req_rx_cqe_err", 2},
			// Not in struct ionic_lif_stats (yet): still a LIF counter.
			{"rx_future_counter", 41},
		},
	}
	return []*instanceFixture{manager, worker}
}

// manifest returns the instances.json entries of the fixtures, which
// internal/sim's writer renders as the launcher does (2-space indentation,
// every key of §2).
func manifest(runDir string, insts []*instanceFixture) []sim.Instance {
	var out []sim.Instance
	for _, f := range insts {
		in := sim.Instance{
			ID: f.id, Role: f.role, PID: f.pid, MAC: f.mac,
			Socket: filepath.Join(runDir, strconv.Itoa(f.id)+".sock"),
		}
		if f.vm != nil {
			in.VM = &sim.VM{
				QMPSocket: filepath.Join(runDir, fmt.Sprintf("qmp-%d.sock", f.id)),
				DeviceID:  fmt.Sprintf("ernic%d", f.id), RootPort: "pcie-vfu.1",
				SSHPort: 2220 + f.id, SSHUser: "ubuntu",
				Attached: true, VMPID: f.vm.pid, VMName: f.vm.name,
				LaunchedAt: f.vm.launchedAt, GPU: f.vm.gpu,
			}
		}
		out = append(out, in)
	}
	return out
}

// statsText renders <id>.stats in the current server's layout
// (receiver/ernicreceiver/internal/rundir/README.md §3), padding included. It is not internal/sim's
// FormatStats on purpose: the fixtures hold what the simulator never
// writes (LIF counters at device level, a fork's trailing section, LIF
// counters outside struct order and unknown ones, mmio totals that are not
// the sums of their parts).
func statsText(runDir string, f *instanceFixture) string {
	var b strings.Builder
	line := func(indent string, width int, key string, value any) {
		fmt.Fprintf(&b, "%s%-*s : %v\n", indent, width, key, value)
	}
	b.WriteString("=== ROCm ERNIC Statistics ===\n")
	b.WriteString("Instance:\n")
	line("  ", 11, "socket", filepath.Join(runDir, strconv.Itoa(f.id)+".sock"))
	if f.role == "manager" {
		line("  ", 11, "backend", "tcp:manager:listen:6320")
	} else {
		line("  ", 11, "backend", "tcp:worker:127.0.0.1:6320")
	}
	line("  ", 11, "pci", "0x1dd8:0x100a")
	line("  ", 11, "mac", f.mac)
	line("  ", 11, "connection", f.connection)
	b.WriteString("\n")
	fmt.Fprintf(&b, "Write count : %d\n\n", f.writeCount)

	b.WriteString("Device Statistics:\n")
	for _, c := range f.device {
		line("  ", 23, c.name, c.value)
	}
	for _, c := range f.deviceLIF {
		line("  ", 23, c.name, c.value)
	}
	b.WriteString("\nPer-QP Statistics:\n")
	for _, q := range f.qps {
		fmt.Fprintf(&b, "  QP %d:\n", q.handle)
		for _, c := range []kv{
			{"doorbell_send", q.doorbellSend}, {"doorbell_recv", q.doorbellRecv},
			{"wqes_processed", q.wqesProcessed}, {"cqes_posted", q.cqesPosted},
			{"bytes_sent", q.bytesSent}, {"bytes_received", q.bytesReceived},
			{"bytes_rdma_read", q.bytesRDMARead}, {"bytes_rdma_write", q.bytesRDMAWrite},
		} {
			line("    ", 14, c.name, c.value)
		}
		b.WriteString("    WQEs by opcode:\n")
		for _, op := range q.opcodes {
			line("      ", 21, op.name, op.value)
		}
		if q.hasOther {
			line("      ", 21, "(other opcodes)", q.other)
		}
		b.WriteString("\n")
	}
	if f.trailer != "" {
		b.WriteString(f.trailer + "\n")
	}
	if f.lif != nil {
		b.WriteString("LIF Statistics:\n")
		for _, c := range f.lif {
			line("  ", 36, c.name, c.value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writeRunDir writes instances.json and one <id>.stats per instance.
func writeRunDir(t *testing.T, runDir string, insts []*instanceFixture) {
	t.Helper()
	harness.WriteManifest(t, runDir, manifest(runDir, insts))
	for _, f := range insts {
		path := filepath.Join(runDir, strconv.Itoa(f.id)+".stats")
		if err := os.WriteFile(path, []byte(statsText(runDir, f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

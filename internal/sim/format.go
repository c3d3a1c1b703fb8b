// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package sim simulates a rocm-ernic run directory, instances.json and the
// <id>.stats files, in the exact format of
// receiver/ernicreceiver/internal/rundir/README.md, written the way the real
// tools do (truncate in place), each instance with a live server child.
package sim

import (
	"fmt"
	"io"
)

// Counter is one named counter line (LIF counters, WQE opcodes).
type Counter struct {
	// Name is the key printed before " : " (e.g. "RDMA_WRITE", "rx_ucast_bytes").
	Name string
	// Value is printed after " : ".
	Value uint64
}

// QP is one per-QP block of the "Per-QP Statistics:" section.
type QP struct {
	// Handle is the QP handle printed in the block header "  QP <Handle>:".
	Handle uint32
	// DoorbellSend is "doorbell_send": send-queue doorbells rung (count).
	DoorbellSend uint64
	// DoorbellRecv is "doorbell_recv": receive-queue doorbells rung (count).
	DoorbellRecv uint64
	// WQEsProcessed is "wqes_processed": work queue entries processed (count).
	WQEsProcessed uint64
	// CQEsPosted is "cqes_posted": completion queue entries posted (count).
	CQEsPosted uint64
	// BytesSent is "bytes_sent": SEND payload bytes sent.
	BytesSent uint64
	// BytesReceived is "bytes_received": payload bytes received into receive WQEs.
	BytesReceived uint64
	// BytesRDMARead is "bytes_rdma_read": bytes moved by RDMA READ.
	BytesRDMARead uint64
	// BytesRDMAWrite is "bytes_rdma_write": bytes moved by RDMA WRITE.
	BytesRDMAWrite uint64
	// Opcodes are the lines under "WQEs by opcode:", those with Value > 0.
	Opcodes []Counter
	// Other prints "(other opcodes) : N", N = WQEsProcessed - sum(Opcodes) in
	// uint64, which wraps near 2^64 like the real server's.
	Other bool
}

// Device holds the 15 device counters of the current server format;
// mmio_*_total are printed as the sums of the BAR0 and UAR ones.
type Device struct {
	// Commands is "commands": admin commands executed (count).
	Commands uint64
	// Bar0Reads is "bar0_reads": MMIO reads of BAR0 registers (count).
	Bar0Reads uint64
	// Bar0Writes is "bar0_writes": MMIO writes of BAR0 registers (count).
	Bar0Writes uint64
	// UARReads is "uar_reads": MMIO reads of the UAR/doorbell page (count).
	UARReads uint64
	// UARWrites is "uar_writes": MMIO writes of the UAR/doorbell page (count).
	UARWrites uint64
	// Interrupts is "interrupts": interrupts raised (count).
	Interrupts uint64
	// ResetCount is "reset_count": device resets and FLRs (count).
	ResetCount uint64
	// BytesSent is "total_bytes_sent" (bytes, sum over QPs).
	BytesSent uint64
	// BytesReceived is "total_bytes_received" (bytes, sum over QPs).
	BytesReceived uint64
	// BytesRDMARead is "total_bytes_rdma_read" (bytes, sum over QPs).
	BytesRDMARead uint64
	// BytesRDMAWrite is "total_bytes_rdma_write" (bytes, sum over QPs).
	BytesRDMAWrite uint64
	// IPBytesTx is "total_ip_bytes_tx": IP bytes transmitted, headers included.
	IPBytesTx uint64
	// IPBytesRx is "total_ip_bytes_rx": IP bytes received, headers included.
	IPBytesRx uint64
}

// values are d's counters in DeviceKeys' order, mmio_*_total the sums of
// the BAR0 and UAR ones (TestFormatStatsSpecExample pins the order).
func (d *Device) values() [len(DeviceKeys)]uint64 {
	return [...]uint64{
		d.Commands, d.Bar0Reads, d.Bar0Writes, d.UARReads, d.UARWrites,
		d.Bar0Reads + d.UARReads, d.Bar0Writes + d.UARWrites,
		d.Interrupts, d.ResetCount,
		d.BytesSent, d.BytesReceived, d.BytesRDMARead, d.BytesRDMAWrite,
		d.IPBytesTx, d.IPBytesRx,
	}
}

// Stats is the whole content of one <run_dir>/<id>.stats file.
type Stats struct {
	// Socket is the "socket" value of the Instance: block (<run_dir>/<id>.sock).
	Socket string
	// Backend is the "backend" value (e.g. "tcp:worker:127.0.0.1:6320").
	Backend string
	// PCI is the "pci" value ("0xVVVV:0xDDDD" or "(not set)").
	PCI string
	// MAC is the "mac" value ("xx:xx:xx:xx:xx:xx").
	MAC string
	// Connection is the "connection" value (rundir/README.md §3.3, e.g. "connected").
	Connection string
	// WriteCount is "Write count : N": the writes this process completed before.
	WriteCount uint64
	// Device is the "Device Statistics:" section.
	Device Device
	// QPs are the blocks of "Per-QP Statistics:", in slice order.
	QPs []QP
	// LIF, when not empty, is printed under "LIF Statistics:" after the QPs.
	LIF []Counter
}

// OpcodeNames is the set of 18 WQE opcode names the server prints under
// "WQEs by opcode:", in the server's order.
var OpcodeNames = [...]string{
	"RDMA_WRITE",
	"RDMA_WRITE_WITH_IMM",
	"SEND",
	"SEND_WITH_IMM",
	"RDMA_READ",
	"ATOMIC_CMP_AND_SWP",
	"ATOMIC_FETCH_AND_ADD",
	"LSO",
	"SEND_WITH_INV",
	"RDMA_READ_WITH_INV",
	"LOCAL_INV",
	"FAST_REG_MR",
	"MASKED_ATOMIC_CMP_SWP",
	"MASKED_ATOMIC_FETCH",
	"BIND_MW",
	"REG_SIG_MR",
	"ERROR",
	"SEND_DC",
}

// Key paddings of the current server (rundir/README.md §3); longer keys whole.
const (
	instancePad = 11 // "  socket      : "
	devicePad   = 23 // "  commands                : "
	qpPad       = 14 // "    doorbell_send  : "
	opcodePad   = 21 // "      RDMA_WRITE            : "
)

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}

// FormatStats writes s to w in the current server's exact format, line by
// line as the server's stdio stream does: give it a buffered writer.
func FormatStats(w io.Writer, s *Stats) error {
	e := &errWriter{w: w}
	e.printf("=== ROCm ERNIC Statistics ===\n")
	e.printf("Instance:\n")
	for _, kv := range [...][2]string{
		{"socket", s.Socket},
		{"backend", s.Backend},
		{"pci", s.PCI},
		{"mac", s.MAC},
		{"connection", s.Connection},
	} {
		e.printf("  %-*s : %s\n", instancePad, kv[0], kv[1])
	}
	e.printf("\nWrite count : %d\n\n", s.WriteCount)

	e.printf("Device Statistics:\n")
	for i, v := range s.Device.values() {
		e.printf("  %-*s : %d\n", devicePad, DeviceKeys[i], v)
	}

	e.printf("\nPer-QP Statistics:\n")
	for i := range s.QPs {
		q := &s.QPs[i]
		e.printf("  QP %d:\n", q.Handle)
		for _, kv := range [...]struct {
			k string
			v uint64
		}{
			{"doorbell_send", q.DoorbellSend},
			{"doorbell_recv", q.DoorbellRecv},
			{"wqes_processed", q.WQEsProcessed},
			{"cqes_posted", q.CQEsPosted},
			{"bytes_sent", q.BytesSent},
			{"bytes_received", q.BytesReceived},
			{"bytes_rdma_read", q.BytesRDMARead},
			{"bytes_rdma_write", q.BytesRDMAWrite},
		} {
			e.printf("    %-*s : %d\n", qpPad, kv.k, kv.v)
		}
		e.printf("    WQEs by opcode:\n")
		var sum uint64
		for _, op := range q.Opcodes {
			sum += op.Value
			if op.Value > 0 {
				e.printf("      %-*s : %d\n", opcodePad, op.Name, op.Value)
			}
		}
		if q.Other {
			// Unsigned arithmetic on purpose: wraps like the C server.
			e.printf("      %-*s : %d\n", opcodePad, "(other opcodes)", q.WQEsProcessed-sum)
		}
		e.printf("\n")
	}

	if len(s.LIF) > 0 {
		e.printf("LIF Statistics:\n")
		for _, c := range s.LIF {
			e.printf("  %s : %d\n", c.Name, c.Value)
		}
		e.printf("\n")
	}
	return e.err
}

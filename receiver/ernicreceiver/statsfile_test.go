// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// This file writes run directories for the receiver's own tests, in the
// server's format (internal/rundir/README.md §2-§4), so that the tests need
// nothing outside this module. It covers what the tests use: the current
// format with the Instance: block, the 15 device counters, QP blocks with
// opcode lines and an optional `(other opcodes)` line, and a LIF block. The
// full simulator (every format variant, live server processes, faults) is the
// repository's internal/sim.

// fileCounter is one `name : value` line (a WQE opcode or a LIF counter).
type fileCounter struct {
	Name  string
	Value uint64
}

// fileQP is one block of `Per-QP Statistics:`.
type fileQP struct {
	Handle                                                  uint32
	DoorbellSend, DoorbellRecv, WQEsProcessed, CQEsPosted   uint64
	BytesSent, BytesReceived, BytesRDMARead, BytesRDMAWrite uint64
	// Opcodes are printed in order, those with a value above 0 only.
	Opcodes []fileCounter
	// Other prints `(other opcodes)` as WQEsProcessed minus the opcodes'
	// sum, in uint64 like the server (it wraps when the sum is larger).
	Other bool
}

// fileDevice is `Device Statistics:`; mmio_reads_total and
// mmio_writes_total are printed as BAR0 plus UAR.
type fileDevice struct {
	Commands, Bar0Reads, Bar0Writes, UARReads, UARWrites, Interrupts, ResetCount  uint64
	BytesSent, BytesReceived, BytesRDMARead, BytesRDMAWrite, IPBytesTx, IPBytesRx uint64
}

// fileStats is one <id>.stats file.
type fileStats struct {
	Socket, Backend, PCI, MAC, Connection string
	WriteCount                            uint64
	Device                                fileDevice
	QPs                                   []fileQP
	// LIF, when not empty, is printed as a `LIF Statistics:` block.
	LIF []fileCounter
}

// formatStats writes s to bw as the current server prints it, and flushes
// bw.
func formatStats(bw *bufio.Writer, s *fileStats) error {
	fmt.Fprintf(bw, "=== ROCm ERNIC Statistics ===\nInstance:\n")
	for _, kv := range [...][2]string{{"socket", s.Socket}, {"backend", s.Backend}, {"pci", s.PCI}, {"mac", s.MAC}, {"connection", s.Connection}} {
		fmt.Fprintf(bw, "  %-11s : %s\n", kv[0], kv[1])
	}
	fmt.Fprintf(bw, "\nWrite count : %d\n\nDevice Statistics:\n", s.WriteCount)
	d := &s.Device
	for _, kv := range []struct {
		k string
		v uint64
	}{
		{"commands", d.Commands}, {"bar0_reads", d.Bar0Reads}, {"bar0_writes", d.Bar0Writes},
		{"uar_reads", d.UARReads}, {"uar_writes", d.UARWrites},
		{"mmio_reads_total", d.Bar0Reads + d.UARReads}, {"mmio_writes_total", d.Bar0Writes + d.UARWrites},
		{"interrupts", d.Interrupts}, {"reset_count", d.ResetCount},
		{"total_bytes_sent", d.BytesSent}, {"total_bytes_received", d.BytesReceived},
		{"total_bytes_rdma_read", d.BytesRDMARead}, {"total_bytes_rdma_write", d.BytesRDMAWrite},
		{"total_ip_bytes_tx", d.IPBytesTx}, {"total_ip_bytes_rx", d.IPBytesRx},
	} {
		fmt.Fprintf(bw, "  %-23s : %d\n", kv.k, kv.v)
	}
	fmt.Fprintf(bw, "\nPer-QP Statistics:\n")
	for i := range s.QPs {
		q := &s.QPs[i]
		fmt.Fprintf(bw, "  QP %d:\n", q.Handle)
		for _, kv := range []struct {
			k string
			v uint64
		}{
			{"doorbell_send", q.DoorbellSend}, {"doorbell_recv", q.DoorbellRecv},
			{"wqes_processed", q.WQEsProcessed}, {"cqes_posted", q.CQEsPosted},
			{"bytes_sent", q.BytesSent}, {"bytes_received", q.BytesReceived},
			{"bytes_rdma_read", q.BytesRDMARead}, {"bytes_rdma_write", q.BytesRDMAWrite},
		} {
			fmt.Fprintf(bw, "    %-14s : %d\n", kv.k, kv.v)
		}
		fmt.Fprintf(bw, "    WQEs by opcode:\n")
		var sum uint64
		for _, op := range q.Opcodes {
			sum += op.Value
			if op.Value > 0 {
				fmt.Fprintf(bw, "      %-21s : %d\n", op.Name, op.Value)
			}
		}
		if q.Other {
			fmt.Fprintf(bw, "      %-21s : %d\n", "(other opcodes)", q.WQEsProcessed-sum)
		}
		fmt.Fprintf(bw, "\n")
	}
	if len(s.LIF) > 0 {
		fmt.Fprintf(bw, "LIF Statistics:\n")
		for _, c := range s.LIF {
			fmt.Fprintf(bw, "  %s : %d\n", c.Name, c.Value)
		}
		fmt.Fprintf(bw, "\n")
	}
	return bw.Flush()
}

// writeStatsFile rewrites path in place as the server does: truncate, write
// through a 4096-byte buffer, close; no temporary file, no rename. A
// concurrent reader can see an empty file or one cut after a multiple of
// 4096 bytes (internal/rundir/README.md §4).
func writeStatsFile(path string, s *fileStats) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	err = formatStats(bufio.NewWriterSize(f, 4096), s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// manifestInstance is one element of instances.json's "instances", with
// the keys the tests set; vm is written as null.
type manifestInstance struct {
	ID     int     `json:"id"`
	Role   string  `json:"role,omitempty"`
	PID    int     `json:"pid"`
	MAC    string  `json:"mac"`
	Socket string  `json:"socket"`
	VM     *string `json:"vm"`
}

// writeManifestFile writes instances.json to path in place.
func writeManifestFile(path string, instances []manifestInstance) error {
	b, err := json.MarshalIndent(struct {
		Instances []manifestInstance `json:"instances"`
	}{instances}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// specExample is the Stats of testdata/spec-example.stats, a whole file of
// the current server (rundir/README.md §3 shows it shortened).
func specExample() *Stats {
	return &Stats{
		Socket:     "/run/rocm-ernic/2.sock",
		Backend:    "tcp:worker:127.0.0.1:6320",
		PCI:        "0x1dd8:0x100a",
		MAC:        "02:aa:00:00:00:02",
		Connection: "connected",
		WriteCount: 3071,
		Device: Device{
			Commands: 211, Bar0Reads: 48810, Bar0Writes: 17020, UARReads: 0, UARWrites: 29931,
			Interrupts: 10440, ResetCount: 1,
			BytesSent: 2097152, BytesReceived: 1048576, BytesRDMARead: 4194304, BytesRDMAWrite: 8388608,
			IPBytesTx: 512044, IPBytesRx: 498230,
		},
		QPs: []QP{
			{
				Handle: 9, DoorbellSend: 512, DoorbellRecv: 256, WQEsProcessed: 771, CQEsPosted: 768,
				BytesSent: 2097152, BytesReceived: 1048576, BytesRDMARead: 0, BytesRDMAWrite: 8388608,
				Opcodes: []Counter{{"RDMA_WRITE", 256}, {"SEND", 512}},
				Other:   true,
			},
			{
				Handle: 4, DoorbellSend: 0, DoorbellRecv: 32, WQEsProcessed: 32, CQEsPosted: 32,
				BytesRDMARead: 4194304,
				Opcodes:       []Counter{{"RDMA_READ", 32}},
			},
		},
	}
}

func format(t *testing.T, s *Stats) string {
	t.Helper()
	var b bytes.Buffer
	if err := FormatStats(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestFormatStatsSpecExample(t *testing.T) {
	want, err := os.ReadFile("testdata/spec-example.stats")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(want, []byte("RDMA_READ             : 32\n\n")) {
		t.Fatalf("testdata/spec-example.stats does not end with the blank line after the last QP block")
	}
	got := format(t, specExample())
	if got != string(want) {
		t.Errorf("FormatStats differs from the spec example\n--- got\n%s--- want\n%s", got, want)
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("first difference at line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
			}
		}
	}
}

func TestFormatStatsNoQPs(t *testing.T) {
	s := specExample()
	s.QPs = nil
	got := format(t, s)
	if !strings.HasSuffix(got, "\n\nPer-QP Statistics:\n") {
		t.Errorf("file without QPs must end right after the header, ends with %q", got[len(got)-40:])
	}
	// mmio totals are derived.
	if !strings.Contains(got, "  mmio_writes_total       : 46951\n") || !strings.Contains(got, "  mmio_reads_total        : 48810\n") {
		t.Errorf("mmio totals wrong:\n%s", got)
	}
}

func TestFormatStatsOtherOpcodesWraps(t *testing.T) {
	s := &Stats{QPs: []QP{{
		Handle: 1, WQEsProcessed: 1,
		Opcodes: []Counter{{"SEND", 2}, {"RDMA_READ", 1}},
		Other:   true,
	}}}
	got := format(t, s)
	want := "      (other opcodes)       : 18446744073709551614\n\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got tail %q, want %q", got[strings.LastIndex(got, "WQEs by opcode"):], want)
	}
}

func TestFormatStatsZeroOpcodesAndLongKeys(t *testing.T) {
	s := &Stats{QPs: []QP{{
		Handle:        4294967295,
		WQEsProcessed: 3,
		Opcodes:       []Counter{{"RDMA_WRITE", 0}, {"MASKED_ATOMIC_CMP_SWP", 2}, {"A_NAME_LONGER_THAN_PAD", 1}},
	}}}
	got := format(t, s)
	for _, want := range []string{
		"  QP 4294967295:\n",
		"      MASKED_ATOMIC_CMP_SWP : 2\n",
		"      A_NAME_LONGER_THAN_PAD : 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "RDMA_WRITE") {
		t.Errorf("zero-valued opcode printed:\n%s", got)
	}
	if strings.Contains(got, "(other opcodes)") {
		t.Errorf("(other opcodes) printed with Other false")
	}
}

func TestFormatStatsLIF(t *testing.T) {
	s := &Stats{LIF: []Counter{{"rx_ucast_bytes", 10}, {"some_new_counter", 0}}}
	got := format(t, s)
	want := "Per-QP Statistics:\nLIF Statistics:\n  rx_ucast_bytes : 10\n  some_new_counter : 0\n\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got %q, want suffix %q", got, want)
	}

	s = specExample()
	s.LIF = []Counter{{"tx_ucast_packets", 7}}
	got = format(t, s)
	if !strings.HasSuffix(got, "RDMA_READ             : 32\n\nLIF Statistics:\n  tx_ucast_packets : 7\n\n") {
		t.Errorf("LIF block not after the QP blocks:\n%s", got)
	}
}

func TestNameTables(t *testing.T) {
	if len(LIFNames) != 74 {
		t.Errorf("len(LIFNames) = %d, want 74", len(LIFNames))
	}
	if len(OpcodeNames) != 18 {
		t.Errorf("len(OpcodeNames) = %d, want 18", len(OpcodeNames))
	}
	seen := map[string]bool{}
	for _, n := range LIFNames {
		if seen[n] {
			t.Errorf("duplicate LIF name %s", n)
		}
		seen[n] = true
	}
	if LIFNames[0] != "rx_ucast_bytes" || LIFNames[12] != "rx_dma_error" || LIFNames[13] != "tx_ucast_bytes" ||
		LIFNames[36] != "tx_rdma_ucast_bytes" || LIFNames[47] != "rdma_req_rx_pkt_seq_err" ||
		LIFNames[73] != "rdma_resp_tx_rnr_retry_err" {
		t.Errorf("LIFNames not in struct order: %v", LIFNames)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, os.ErrClosed
	}
	return len(p), nil
}

func TestFormatStatsReportsWriteError(t *testing.T) {
	if err := FormatStats(&failWriter{n: 5}, specExample()); err == nil {
		t.Error("want the writer's error")
	}
}

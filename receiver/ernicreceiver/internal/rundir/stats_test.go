// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata is the receiver's testdata folder (run directories, stats-file
// variants and a fake /proc), shared by its packages' tests.
const testdata = "../../testdata"

func readTestdata(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, rel))
	require.NoError(t, err)
	return data
}

func mustParse(t *testing.T, rel string) *Stats {
	t.Helper()
	s, err := ParseStats(readTestdata(t, rel))
	require.NoError(t, err)
	return s
}

func dev(t *testing.T, s *Stats, k DeviceKey) uint64 {
	t.Helper()
	v, ok := s.Device.Get(k)
	require.True(t, ok, "device key %s missing", k)
	return v
}

func qpVal(t *testing.T, q *QP, k QPKey) uint64 {
	t.Helper()
	v, ok := q.Get(k)
	require.True(t, ok, "QP %d key %s missing", q.Handle, k)
	return v
}

func TestParseStatsCurrentFormat(t *testing.T) {
	s := mustParse(t, "rundir/basic/2.stats")
	assert.Equal(t, "/run/rocm-ernic/2.sock", s.Socket)
	assert.Equal(t, "tcp:worker:127.0.0.1:6320", s.Backend)
	assert.Equal(t, "0x1dd8:0x100a", s.PCI)
	assert.Equal(t, "02:aa:00:00:00:02", s.MAC)
	assert.True(t, s.HasConnection)
	assert.Equal(t, "connected (PCI FLR)", s.Connection)
	assert.True(t, s.HasWriteCount)
	assert.Equal(t, uint64(3071), s.WriteCount)

	want := map[DeviceKey]uint64{
		Commands: 211, Bar0Reads: 48810, Bar0Writes: 17020, UARReads: 0, UARWrites: 29931,
		MMIOReads: 48810, MMIOWrites: 46951, Interrupts: 10440, ResetCount: 1,
		BytesSent: 2097152, BytesReceived: 1048576, BytesRDMARead: 4194304,
		BytesRDMAWrite: 8388608, IPBytesTx: 512044, IPBytesRx: 498230,
	}
	assert.Len(t, want, int(numCurrentDeviceKeys), "the current server's keys")
	for k, v := range want {
		assert.Equal(t, v, dev(t, s, k), "device %s", k)
	}
	for k := numCurrentDeviceKeys; k < NumDeviceKeys; k++ {
		_, ok := s.Device.Get(k)
		assert.False(t, ok, "%s, an older server's key, must be absent", k)
	}

	require.Len(t, s.QPs, 2)
	q9, q4 := &s.QPs[0], &s.QPs[1]
	assert.Equal(t, uint32(9), q9.Handle, "file order is kept")
	assert.Equal(t, uint32(4), q4.Handle)
	assert.Equal(t, uint64(512), qpVal(t, q9, QPDoorbellSend))
	assert.Equal(t, uint64(256), qpVal(t, q9, QPDoorbellRecv))
	assert.Equal(t, uint64(771), qpVal(t, q9, QPWQEsProcessed))
	assert.Equal(t, uint64(768), qpVal(t, q9, QPCQEsPosted))
	assert.Equal(t, uint64(2097152), qpVal(t, q9, QPBytesSent))
	assert.Equal(t, uint64(1048576), qpVal(t, q9, QPBytesReceived))
	assert.Equal(t, uint64(0), qpVal(t, q9, QPBytesRDMARead))
	assert.Equal(t, uint64(8388608), qpVal(t, q9, QPBytesRDMAWrite))
	assert.Equal(t, []Counter{{"RDMA_WRITE", 256}, {"SEND", 512}}, q9.Opcodes)
	assert.True(t, q9.HasOther)
	assert.Equal(t, uint64(3), q9.Other)
	assert.Equal(t, []Counter{{"RDMA_READ", 32}, {"SEND", 1}}, q4.Opcodes)
	assert.Equal(t, uint64(18446744073709551615), q4.Other, "the wrapped value is kept as printed; the scraper drops it")

	assert.Equal(t, []Counter{
		{"rx_ucast_bytes", 498230}, {"rx_ucast_packets", 3301}, {"tx_ucast_bytes", 512044},
		{"tx_ucast_packets", 3410}, {"rx_rdma_ucast_packets", 2048}, {"rdma_req_rx_cqe_err", 2},
		{"rx_rdma_future_counter", 7},
	}, s.LIF, "every key of the LIF section, known or not")
	assert.Empty(t, s.Problems)
}

func TestParseStatsStartupFile(t *testing.T) {
	s := mustParse(t, "rundir/basic/1.stats")
	assert.Equal(t, "(not set)", s.Connection)
	assert.Equal(t, uint64(0), s.WriteCount)
	assert.True(t, s.HasWriteCount)
	assert.Empty(t, s.QPs)
	assert.Empty(t, s.LIF)
	assert.Equal(t, uint64(0), dev(t, s, Commands))
}

// The regs_* format of older servers (README.md §3.4).
func TestParseStatsRegsFormat(t *testing.T) {
	s := mustParse(t, "stats/regs-format.stats")
	assert.Equal(t, uint64(12), s.WriteCount, "`Write count: N` without the space")
	assert.Equal(t, uint64(2), dev(t, s, FLRResetCount))
	assert.Equal(t, uint64(900), dev(t, s, RegsReads))
	assert.Equal(t, uint64(300), dev(t, s, RegsWrites))
	for _, k := range []DeviceKey{ResetCount, MMIOReads, MMIOWrites, IPBytesTx, IPBytesRx} {
		_, ok := s.Device.Get(k)
		assert.False(t, ok, "%s must be absent", k)
	}
	require.Len(t, s.QPs, 1)
	q := &s.QPs[0]
	assert.Equal(t, uint64(1), qpVal(t, q, QPDoorbellSRQ))
	assert.Equal(t, uint64(2), qpVal(t, q, QPContinuations))
	assert.Equal(t, uint64(11), qpVal(t, q, QPWQEsProcessed))
	assert.Equal(t, []Counter{{"SEND", 5}, {"ATOMIC_FETCH_AND_ADD", 2}, {"MASKED_ATOMIC_CMP_SWP", 3}}, q.Opcodes,
		"`NAME: N` lines of 20- and 21-character names")
	assert.True(t, q.HasOther)
	assert.Equal(t, uint64(1), q.Other, "(other opcodes) with a different pad")
	assert.Empty(t, s.Problems)
}

func TestParseStatsRegsFormatNoQPs(t *testing.T) {
	s := mustParse(t, "stats/regs-format-no-qps.stats")
	assert.Empty(t, s.QPs)
	assert.Equal(t, "disconnected (client closed)", s.Connection)
	assert.Equal(t, uint64(3), s.WriteCount)
}

func TestParseStatsTrailingSections(t *testing.T) {
	s := mustParse(t, "stats/trailing-sections.stats")
	require.Len(t, s.QPs, 1, "a QP header under an unknown section is not a QP")
	q := &s.QPs[0]
	assert.Equal(t, uint32(3), q.Handle)
	assert.Equal(t, uint64(4), qpVal(t, q, QPBytesSent), "keys under a later header do not belong to the last QP")
	assert.Equal(t, []Counter{{"SEND", 3}}, q.Opcodes)
	assert.Equal(t, []Counter{
		{"rx_dma_error", 4}, // a LIF name at device level
		{"tx_rdma_ucast_packets", 11}, {"rdma_resp_rx_out_of_buffer", 1},
	}, s.LIF)
	assert.Equal(t, uint64(21), dev(t, s, MMIOReads))
}

func TestParseStatsLineRule(t *testing.T) {
	// Padding varies; mac and backend hold ':' but never ' : '.
	file := "Instance:\n" +
		"  mac : 02:AA:00:00:00:0a\n" +
		"  backend:x : tcp:worker:10.0.0.1:6320\n" +
		"  connection          :   connected (device reset)   \n" +
		"Write count : 7\n" +
		deviceBlock("") +
		"\nPer-QP Statistics:\n"
	s, err := ParseStats([]byte(file))
	require.NoError(t, err)
	assert.Equal(t, "02:AA:00:00:00:0a", s.MAC)
	assert.Equal(t, "connected (device reset)", s.Connection)
	assert.Equal(t, uint64(7), s.WriteCount)
}

// deviceBlock returns a current-format device section with every value 1,
// plus extra lines.
func deviceBlock(extra string) string {
	var b strings.Builder
	b.WriteString("Device Statistics:\n")
	for k := range numCurrentDeviceKeys {
		b.WriteString("  " + k.String() + " : 1\n")
	}
	b.WriteString(extra)
	return b.String()
}

func TestParseStatsProblemsKeepTheRest(t *testing.T) {
	file := "Write count : x12\n" +
		deviceBlock("  interrupts : -5\n") +
		"\nPer-QP Statistics:\n" +
		"  QP 1:\n    bytes_sent : 12abc\n    bytes_received : 99999999999999999999999\n    doorbell_send : 3\n\n" +
		"  QP 1:\n    doorbell_send : 4\n\n"
	s, err := ParseStats([]byte(file))
	require.NoError(t, err)
	assert.False(t, s.HasWriteCount)
	assert.Equal(t, uint64(1), dev(t, s, Interrupts), "a bad value leaves the good one")
	require.Len(t, s.QPs, 1)
	assert.Equal(t, uint64(3), qpVal(t, &s.QPs[0], QPDoorbellSend), "the duplicate block is ignored")
	_, ok := s.QPs[0].Get(QPBytesSent)
	assert.False(t, ok)
	var msgs []string
	for _, p := range s.Problems {
		msgs = append(msgs, p.Error())
	}
	assert.Equal(t, []string{
		`line 1: Write count "x12" is not an unsigned 64-bit integer`,
		`line 18: device counter interrupts: "-5" is not an unsigned 64-bit integer`,
		`line 22: QP 1 bytes_sent: "12abc" is not an unsigned 64-bit integer`,
		`line 23: QP 1 bytes_received: "99999999999999999999999" is not an unsigned 64-bit integer`,
		`line 26: QP 1 printed twice; the second block is ignored`,
	}, msgs)
}

func TestParseStatsIncomplete(t *testing.T) {
	whole := readTestdata(t, "rundir/basic/2.stats")
	cases := map[string][]byte{
		"empty":                       {},
		"cut inside a line":           whole[:len(whole)-10],
		"cut inside a value":          []byte(strings.SplitAfter(string(whole), "commands                : 2")[0]),
		"cut at a line end in a QP":   []byte(strings.SplitAfter(string(whole), "cqes_posted    : 768\n")[0]),
		"cut before Per-QP header":    []byte(strings.SplitAfter(string(whole), "total_ip_bytes_rx       : 498230\n\n")[0]),
		"cut after an opcode line":    []byte(strings.SplitAfter(string(whole), "SEND                  : 512\n")[0]),
		"cut inside the LIF section":  []byte(strings.SplitAfter(string(whole), "tx_ucast_packets : 3410\n")[0]),
		"only the instance section":   []byte(strings.SplitAfter(string(whole), "Write count : 3071\n\n")[0]),
		"device section without QPs?": []byte(strings.SplitAfter(string(whole), "Device Statistics:\n")[0]),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseStats(data)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrIncomplete), "got %v", err)
		})
	}
}

// TestParseStatsEveryPrefix cuts a complete file at every byte: a prefix is
// accepted only where the file itself could legally end, and then it holds
// only whole blocks, each with every value exactly as in the whole file.
func TestParseStatsEveryPrefix(t *testing.T) {
	whole := readTestdata(t, "rundir/basic/2.stats")
	full, err := ParseStats(whole)
	require.NoError(t, err)
	accepted := 0
	for n := range len(whole) {
		s, err := ParseStats(whole[:n])
		if err != nil {
			require.ErrorIs(t, err, ErrIncomplete, "prefix %d", n)
			continue
		}
		accepted++
		// Only a cut right after an empty line, or right after the QP
		// header (the form of a file without QPs), can pass the form check.
		require.True(t, strings.HasSuffix(string(whole[:n]), "\n\n") || strings.HasSuffix(string(whole[:n]), "Per-QP Statistics:\n"),
			"prefix %d accepted", n)
		assert.Equal(t, full.Device, s.Device)
		assert.Equal(t, full.WriteCount, s.WriteCount)
		require.LessOrEqual(t, len(s.QPs), len(full.QPs))
		for i := range s.QPs {
			assert.Equal(t, full.QPs[i], s.QPs[i], "prefix %d QP %d", n, i)
		}
	}
	// The cuts after the QP header, after the blank line that ends QP 9 and
	// after the one that ends QP 4: complete in form. The server's stdio
	// buffer cuts only at multiples of 4 KiB, which the reader re-checks,
	// and the scraper rejects a file with fewer blocks than the last one.
	assert.Equal(t, 3, accepted)
}

func TestParseStatsUnknownFormat(t *testing.T) {
	_, err := ParseStats([]byte("Device Statistics:\n  commands : 1\n\nPer-QP Statistics:\n"))
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrIncomplete))
	assert.Contains(t, err.Error(), "device counter interrupts missing")
}

// A key printed twice in one scope keeps the last value, never the sum, and
// is reported.
func TestParseStatsDuplicates(t *testing.T) {
	file := deviceBlock("  rx_ucast_bytes : 100\n") +
		"\nPer-QP Statistics:\n" +
		"  QP 9:\n    bytes_sent : 1\n    bytes_sent : 2\n    WQEs by opcode:\n" +
		"      SEND : 512\n      SEND : 600\n      (other opcodes) : 1\n      (other opcodes) : 2\n\n" +
		"  QP 4294967296:\n    bytes_sent : 5\n\n" +
		"LIF Statistics:\n  rx_ucast_bytes : 200\n  rx_ucast_packets : 3\n\n"
	s, err := ParseStats([]byte(file))
	require.NoError(t, err)
	assert.Equal(t, []Counter{{"rx_ucast_bytes", 200}, {"rx_ucast_packets", 3}}, s.LIF)
	require.Len(t, s.QPs, 1, "a handle past uint32 is no QP")
	q := &s.QPs[0]
	assert.Equal(t, uint64(2), qpVal(t, q, QPBytesSent))
	assert.Equal(t, []Counter{{"SEND", 600}}, q.Opcodes)
	assert.Equal(t, uint64(2), q.Other)
	var msgs []string
	for _, p := range s.Problems {
		msgs = append(msgs, p.Error())
	}
	assert.Equal(t, []string{
		"line 22: QP 9 bytes_sent printed twice; the last value is used",
		"line 25: QP 9 opcode SEND printed twice; the last value is used",
		"line 27: QP 9 (other opcodes) printed twice; the last value is used",
		`line 29: QP header "QP 4294967296:": the handle is not a decimal uint32; block ignored`,
		"line 33: LIF counter rx_ucast_bytes printed twice; the last value is used",
	}, msgs)
}

func TestParseStatsCRLF(t *testing.T) {
	whole := strings.ReplaceAll(string(readTestdata(t, "rundir/basic/2.stats")), "\n", "\r\n")
	_, err := ParseStats([]byte(whole))
	require.ErrorContains(t, err, "CRLF")
	assert.False(t, errors.Is(err, ErrIncomplete), "not retried: it will not get better")
}

// Only a column-0 `Write count` line is the write count, and a second one is
// reported (findings F2, F3 of the fuzzing work).
func TestParseStatsWriteCountLine(t *testing.T) {
	file := "Write count : 5\nWrite count: 7\nWrite counter : 9\n" + deviceBlock("") + "\nPer-QP Statistics:\n"
	s, err := ParseStats([]byte(file))
	require.NoError(t, err)
	assert.Equal(t, uint64(7), s.WriteCount)
	require.Len(t, s.Problems, 1)
	assert.Equal(t, "line 2: Write count printed twice; the last value is used", s.Problems[0].Error())
}

// The QP header and the old no-QPs line end a file only in their place: the
// same words inside a QP block are a cut (finding F1).
func TestParseStatsEndLinesOutOfPlace(t *testing.T) {
	base := deviceBlock("") + "\nPer-QP Statistics:\n  QP 1:\n    bytes_sent : 1\n"
	for _, tail := range []string{"  Per-QP Statistics:\n", "  (no QPs created yet)\n"} {
		_, err := ParseStats([]byte(base + tail))
		require.ErrorIs(t, err, ErrIncomplete, "ending %q", tail)
	}
}

// The lookup switches name every key of the name tables, and nothing else.
func TestKeyLookups(t *testing.T) {
	for k := range NumDeviceKeys {
		got, ok := lookupDeviceKey([]byte(k.String()))
		assert.True(t, ok, k.String())
		assert.Equal(t, k, got)
	}
	for k := range NumQPKeys {
		got, ok := lookupQPKey([]byte(k.String()))
		assert.True(t, ok, k.String())
		assert.Equal(t, k, got)
	}
	for _, key := range []string{"", "command", "commands ", "doorbell_send", "bytes_sent_total"} {
		_, ok := lookupDeviceKey([]byte(key))
		assert.False(t, ok, "device %q", key)
	}
	for _, key := range []string{"", "commands", "doorbell", "bytes_sent "} {
		_, ok := lookupQPKey([]byte(key))
		assert.False(t, ok, "qp %q", key)
	}
}

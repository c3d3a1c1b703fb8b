// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

// Native Go fuzz targets of the two run-directory parsers. They check
// properties, not only the absence of panics:
//
// FuzzParseStats, on every input:
//   - parsing is deterministic: two parses give DeepEqual results and equal
//     errors, and exactly one of result and error is set;
//   - the result does not alias the input (Reader reuses its buffer between
//     reads): scribbling over the input after the parse changes nothing;
//   - an input that does not end with a newline is ErrIncomplete.
//
// and, on every input that parses (a "whole file" F), for every proper
// prefix P of F (checkStatsPrefixes):
//   - P is rejected with an error wrapping ErrIncomplete unless it ends at a
//     legal end point of a file: right after an empty line, right after the
//     column-0 `Per-QP Statistics:` line, or right after the very old
//     server's `(no QPs created yet)` line that directly follows that header
//     (ParseStats' documented rule; blank lines, which the line rule strips
//     to nothing, may follow either). A cut anywhere else, inside a line or
//     after any other non-empty line, is a torn read. A prefix at a legal end
//     point may parse: the reader and the scraper catch those cuts by other
//     means (a size that is a multiple of StdioBuffer is re-read; a file with
//     fewer QP blocks or LIF counters than the last one is rejected). The
//     header counts only at column 0 and the no-QPs line only right under
//     it (finding F1; inputs lenient-* are its regression tests);
//   - when P parses, nothing in it differs from F: its QP blocks are the
//     first blocks of F, each whole and equal to F's block of the same
//     handle; every device counter, LIF counter and the write count it holds
//     are in F with the same value. The one exception is a key that F prints
//     again after the cut (a repeated `Device Statistics:` or LIF section, a
//     second `Write count` line):
//     the parser keeps the last value of a duplicated key, so P legitimately
//     holds the earlier line's value, itself a whole line of F. A QP key has
//     no such exception: at a legal end point the block is closed, and a
//     later block with the same handle is ignored.
//
// FuzzParseManifest, on every input:
//   - parsing is deterministic and does not alias the input;
//   - the ids of the result are positive and unique, pids are not negative,
//     and StatsFile is the plain name <id>.stats;
//
// and, on every input that parses, every proper prefix that is shorter than
// the document without its trailing whitespace fails with ErrIncomplete.
//
// `make test` runs each target for a bounded time; `make fuzz` runs them
// longer. Inputs that failed are kept under testdata/fuzz/<FuzzName>/ and
// replayed by every `go test`.

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxPrefixCheck bounds the inputs whose every prefix is parsed (quadratic
// work); larger inputs get the per-input properties only.
const maxPrefixCheck = 8 << 10

// addTestdataSeeds adds every file under the receiver's testdata/rundir
// and testdata/stats as a seed.
func addTestdataSeeds(f *testing.F) {
	f.Helper()
	n := 0
	for _, dir := range []string{"rundir", "stats"} {
		err := filepath.WalkDir(filepath.Join(testdata, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f.Add(data)
			n++
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	if n < 10 {
		f.Fatalf("only %d seed files under %s/rundir and %s/stats", n, testdata, testdata)
	}
}

// replaceAll returns s with each old→new pair of repl replaced, failing when
// an old string is not in s (so that a seed never silently stops being the
// variant it is meant to be).
func replaceAll(tb testing.TB, s string, repl ...string) string {
	tb.Helper()
	for i := 0; i+1 < len(repl); i += 2 {
		if !strings.Contains(s, repl[i]) {
			tb.Fatalf("seed variant: %q not in the base file", repl[i])
		}
		s = strings.ReplaceAll(s, repl[i], repl[i+1])
	}
	return s
}

// specExample is a whole stats file of the current server (rundir/README.md
// §3 shows it shortened).
const specExample = `=== ROCm ERNIC Statistics ===
Instance:
  socket      : /run/rocm-ernic/2.sock
  backend     : tcp:worker:127.0.0.1:6320
  pci         : 0x1dd8:0x100a
  mac         : 02:aa:00:00:00:02
  connection  : connected

Write count : 3071

Device Statistics:
  commands                : 211
  bar0_reads              : 48810
  bar0_writes             : 17020
  uar_reads               : 0
  uar_writes              : 29931
  mmio_reads_total        : 48810
  mmio_writes_total       : 46951
  interrupts              : 10440
  reset_count             : 1
  total_bytes_sent        : 2097152
  total_bytes_received    : 1048576
  total_bytes_rdma_read   : 4194304
  total_bytes_rdma_write  : 8388608
  total_ip_bytes_tx       : 512044
  total_ip_bytes_rx       : 498230

Per-QP Statistics:
  QP 9:
    doorbell_send  : 512
    doorbell_recv  : 256
    wqes_processed : 771
    cqes_posted    : 768
    bytes_sent     : 2097152
    bytes_received : 1048576
    bytes_rdma_read : 0
    bytes_rdma_write : 8388608
    WQEs by opcode:
      RDMA_WRITE            : 256
      SEND                  : 512
      (other opcodes)       : 3

  QP 4:
    doorbell_send  : 0
    doorbell_recv  : 32
    wqes_processed : 32
    cqes_posted    : 32
    bytes_sent     : 0
    bytes_received : 0
    bytes_rdma_read : 4194304
    bytes_rdma_write : 0
    WQEs by opcode:
      RDMA_READ             : 32

`

// statsVariants are the format variants of rundir/README.md §3.2-3.4, each
// a complete file derived from the spec's example.
func statsVariants(tb testing.TB) map[string]string {
	tb.Helper()
	const lif = "LIF Statistics:\n  rx_ucast_bytes : 498230\n  tx_rdma_ucast_packets : 11\n  rx_rdma_future_counter : 7\n\n"
	headerOnly := strings.SplitAfter(specExample, "Per-QP Statistics:\n")[0]
	v := map[string]string{
		"spec example": specExample,
		// §3.4: `Write count: N`, no space before the colon.
		"write count without space": replaceAll(tb, specExample, "Write count : 3071", "Write count: 3071"),
		// §3.4: flr_reset_count, regs_reads/regs_writes, no total_ip_bytes_*.
		"older device keys": replaceAll(tb, specExample,
			"  reset_count             : 1\n", "  flr_reset_count         : 1\n",
			"  mmio_reads_total        : 48810\n", "  regs_reads              : 48810\n",
			"  mmio_writes_total       : 46951\n", "  regs_writes             : 46951\n",
			"  total_ip_bytes_tx       : 512044\n", "",
			"  total_ip_bytes_rx       : 498230\n", ""),
		// §3.4: QP keys doorbell_srq and continuations.
		"doorbell_srq and continuations": replaceAll(tb, specExample,
			"    doorbell_recv  : 256\n", "    doorbell_recv  : 256\n    doorbell_srq   : 4\n    continuations  : 9\n"),
		// §3.4: `NAME: N` opcode lines for names of 20 and 21 characters.
		"opcode lines without space": replaceAll(tb, specExample,
			"      SEND                  : 512\n",
			"      SEND                  : 510\n      ATOMIC_FETCH_AND_ADD: 1\n      MASKED_ATOMIC_CMP_SWP: 1\n"),
		// §3.4: `(other opcodes)` with another pad.
		"other opcodes other pad": replaceAll(tb, specExample, "      (other opcodes)       : 3\n", "      (other opcodes)    : 3\n"),
		// §3.2: the wrapped `(other opcodes)` difference near 2^64.
		"wrapped other": replaceAll(tb, specExample,
			"      RDMA_READ             : 32\n",
			"      RDMA_READ             : 32\n      SEND                  : 1\n      (other opcodes)       : 18446744073709551615\n"),
		// The QP-line memo (lineMemo): lines of the second block that
		// start like the first block's but whose value the memo must leave
		// to the general path, or reads in its own pass.
		"memo: 20-digit maximum": replaceAll(tb, specExample, "    bytes_rdma_read : 4194304\n", "    bytes_rdma_read : 18446744073709551615\n"),
		"memo: 19 digits":        replaceAll(tb, specExample, "    bytes_rdma_read : 4194304\n", "    bytes_rdma_read : 9999999999999999999\n"),
		"memo: trailing space":   replaceAll(tb, specExample, "    doorbell_recv  : 32\n", "    doorbell_recv  : 32 \n"),
		"memo: leading zeros":    replaceAll(tb, specExample, "    bytes_sent     : 0\n    bytes_received : 0\n", "    bytes_sent     : 000\n    bytes_received : 00\n"),
		// §3.2: a server with no QPs ends right after the header.
		"no QPs": headerOnly,
		// §3.2: the very old server's no-QPs line.
		"no QPs old line": headerOnly + "  (no QPs created yet)\n",
		// §3.2: the LIF block after the QP blocks.
		"LIF section": specExample + lif,
		// §3.2: known LIF names at device level are LIF counters.
		"LIF names at device level": replaceAll(tb, specExample,
			"  total_ip_bytes_rx       : 498230\n",
			"  total_ip_bytes_rx       : 498230\n  rx_dma_error            : 4\n  a_key_from_a_newer_server : 1\n"),
		// §3.2: further sections after the QP blocks, QP-looking lines in them.
		"trailing sections": specExample + "Fork Extras:\n  bytes_sent : 999\n  QP 77:\n    doorbell_send : 5\n\n" + lif,
		// §4: a trailing section that ends the file with its blank line.
		"trailing section only": headerOnly + "Fork Extras:\n  x : 1\n\n",
		// §3.3: every connection state; §3.2 `(not set)` pci.
		"startup file": replaceAll(tb, headerOnly, "connected", "(not set)", "0x1dd8:0x100a", "(not set)"),
	}
	// All the older-format features at once.
	v["older server"] = replaceAll(tb, v["older device keys"],
		"Write count : 3071", "Write count: 3071",
		"    doorbell_recv  : 256\n", "    doorbell_recv  : 256\n    doorbell_srq   : 4\n    continuations  : 9\n",
		"      (other opcodes)       : 3\n", "      ATOMIC_FETCH_AND_ADD: 1\n      (other opcodes)    : 2\n")
	// Several QPs, handles not sorted, then the LIF block. (A few only:
	// every prefix of a seed is parsed on each run, and the parser does not
	// depend on the size of the file.)
	var big strings.Builder
	big.WriteString(headerOnly)
	for _, h := range []int{7, 1, 4096, 3} {
		big.WriteString("  QP " + strconv.Itoa(h) + ":\n" +
			"    doorbell_send  : 1\n    doorbell_recv  : 2\n    wqes_processed : 3\n    cqes_posted    : 3\n" +
			"    bytes_sent     : 4\n    bytes_received : 5\n    bytes_rdma_read : 6\n    bytes_rdma_write : 7\n" +
			"    WQEs by opcode:\n      SEND                  : 3\n\n")
	}
	big.WriteString(lif)
	v["several QPs and LIF"] = big.String()
	return v
}

// TestFuzzStatsSeeds: every spec variant seed is a complete file, so that
// the fuzzer's prefix properties start from whole files of every format.
func TestFuzzStatsSeeds(t *testing.T) {
	for name, file := range statsVariants(t) {
		s, err := ParseStats([]byte(file))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(s.Problems) > 0 {
			t.Errorf("%s: problems %v", name, s.Problems)
		}
	}
}

// memoEdges are files whose second QP block has a line that starts like the
// first block's but that the QP-line memo (lineMemo) must leave to the
// general path, each with the problem the parse reports.
func memoEdges(tb testing.TB) map[string][2]string {
	tb.Helper()
	return map[string][2]string{
		"20-digit overflow": {replaceAll(tb, specExample, "    bytes_rdma_read : 4194304\n", "    bytes_rdma_read : 99999999999999999999\n"),
			`line 50: QP 4 bytes_rdma_read: "99999999999999999999" is not an unsigned 64-bit integer`},
		"digits then text": {replaceAll(tb, specExample, "    cqes_posted    : 32\n", "    cqes_posted    : 32x\n"),
			`line 47: QP 4 cqes_posted: "32x" is not an unsigned 64-bit integer`},
		"no value": {replaceAll(tb, specExample, "    wqes_processed : 32\n", "    wqes_processed : \n"),
			`line 46: QP 4 wqes_processed: "" is not an unsigned 64-bit integer`},
		"key twice": {replaceAll(tb, specExample, "    doorbell_send  : 0\n    doorbell_recv  : 32\n", "    doorbell_send  : 0\n    doorbell_send  : 5\n"),
			"line 45: QP 4 doorbell_send printed twice; the last value is used"},
	}
}

// The memo's edge cases parse as without the memo, with their problem.
func TestLineMemoEdges(t *testing.T) {
	for name, c := range memoEdges(t) {
		with, err := ParseStats([]byte(c[0]))
		require.NoError(t, err, name)
		without := &Stats{}
		require.NoError(t, parseStats(without, []byte(c[0]), false), name)
		assert.Equal(t, snapshot(without), snapshot(with), name)
		require.Len(t, with.Problems, 1, name)
		assert.Equal(t, c[1], with.Problems[0].Error(), name)
	}
}

func FuzzParseStats(f *testing.F) {
	addTestdataSeeds(f)
	variants := statsVariants(f)
	for _, name := range slices.Sorted(maps.Keys(variants)) {
		f.Add([]byte(variants[name]))
	}
	edges := memoEdges(f)
	for _, name := range slices.Sorted(maps.Keys(edges)) {
		f.Add([]byte(edges[name][0]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStats(t, data)
		// Most mutations lose the final newline, which ParseStats rejects
		// first; the same input with one gets to the rest of the parser.
		if len(data) == 0 || data[len(data)-1] != '\n' {
			checkStats(t, append(bytes.Clone(data), '\n'))
		}
	})
}

// checkStats checks the properties of every input, and the prefix
// properties of an input that parses.
func checkStats(t *testing.T, input []byte) {
	t.Helper()
	data := bytes.Clone(input)
	s1, err1 := ParseStats(data)
	if !bytes.Equal(data, input) {
		t.Fatal("ParseStats modified its input")
	}
	// The result must not alias the input: the Reader reuses its buffer.
	for i := range data {
		data[i] ^= 0x55
	}
	s2, err2 := ParseStats(input)
	if (s1 == nil) == (err1 == nil) {
		t.Fatalf("ParseStats returned %v and error %v: want exactly one", s1, err1)
	}
	if !sameError(err1, err2) {
		t.Fatalf("not deterministic: error %v, then %v", err1, err2)
	}
	if !reflect.DeepEqual(s1, s2) {
		t.Fatalf("not deterministic (or the result aliases the input):\n%+v\n%+v", s1, s2)
	}
	// Parsing into a Stats that held earlier inputs (the scraper reuses
	// them) gives the same snapshot.
	err3 := ParseStatsInto(reused, input)
	if !sameError(err1, err3) {
		t.Fatalf("ParseStatsInto a reused Stats: error %v, ParseStats: %v", err3, err1)
	}
	if err1 == nil && !reflect.DeepEqual(snapshot(s1), snapshot(reused)) {
		t.Fatalf("ParseStatsInto a reused Stats differs from ParseStats:\n%+v\n%+v", snapshot(reused), snapshot(s1))
	}
	// The QP-line memo changes nothing.
	plain := &Stats{}
	err4 := parseStats(plain, input, false)
	if !sameError(err1, err4) {
		t.Fatalf("without the line memo: error %v, with it: %v", err4, err1)
	}
	if err1 == nil && !reflect.DeepEqual(snapshot(s1), snapshot(plain)) {
		t.Fatalf("the line memo changes the snapshot:\nwith:    %+v\nwithout: %+v", snapshot(s1), snapshot(plain))
	}
	if (len(input) == 0 || input[len(input)-1] != '\n') && !errors.Is(err1, ErrIncomplete) {
		t.Fatalf("input without a final newline: error %v, want ErrIncomplete", err1)
	}
	if err1 == nil && len(input) <= maxPrefixCheck {
		checkStatsPrefixes(t, input, s1)
	}
}

// sameError: both nil, or the same message and the same ErrIncomplete-ness.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error() && errors.Is(a, ErrIncomplete) == errors.Is(b, ErrIncomplete)
}

// checkStatsPrefixes checks every proper prefix of the whole file data,
// whose parse is full (see the comment at the top of the file).
// reused is the Stats checkStats parses every input into, after the inputs
// before it.
var reused = &Stats{}

// snapshot returns the exported content of s, empty lists as nil.
func snapshot(s *Stats) Stats {
	c := *s
	c.scratch = scratch{}
	if len(c.QPs) == 0 {
		c.QPs = nil
	}
	if len(c.LIF) == 0 {
		c.LIF = nil
	}
	return c
}

func checkStatsPrefixes(t *testing.T, data []byte, full *Stats) {
	t.Helper()
	for n := range len(data) {
		p := data[:n]
		s, err := ParseStats(p)
		whole := legalEnd(p)
		if !whole {
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("prefix of %d bytes, cut inside a line or after a non-empty line, ending %q: error %v, want ErrIncomplete",
					n, tail(p), err)
			}
			continue
		}
		if err != nil {
			continue
		}
		if msg := prefixDiffers(s, full, data[n:], true); msg != "" {
			t.Fatalf("prefix of %d bytes, ending %q, accepted: %s", n, tail(p), msg)
		}
	}
}

// legalEnd tells whether a file may end after p: p ends with an empty line,
// or its last non-blank line is the column-0 `Per-QP Statistics:` header, or
// the old `(no QPs created yet)` line right after that header. A blank line
// (only whitespace: the line rule strips it to nothing) holds no data, so
// blank lines after the header change nothing; but only a truly empty line
// ends a file after a QP block or a section.
func legalEnd(p []byte) bool {
	if len(p) == 0 || p[len(p)-1] != '\n' {
		return false
	}
	lines := strings.Split(string(p[:len(p)-1]), "\n")
	if lines[len(lines)-1] == "" {
		return true
	}
	var nonBlank []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			nonBlank = append(nonBlank, l)
		}
	}
	switch n := len(nonBlank); {
	case n == 0:
		return false
	case isQPHeaderLine(nonBlank[n-1]):
		return true
	case strings.TrimSpace(nonBlank[n-1]) == noQPsLine && n >= 2 && isQPHeaderLine(nonBlank[n-2]):
		return true
	}
	return false
}

// isQPHeaderLine: the line is the `Per-QP Statistics:` section header, at
// column 0 (trailing blanks stripped by the line rule).
func isQPHeaderLine(line string) bool {
	return line != "" && line[0] != ' ' && line[0] != '\t' && strings.TrimSpace(line) == headerQPs
}

func tail(p []byte) string {
	if len(p) > 60 {
		return "…" + string(p[len(p)-60:])
	}
	return string(p)
}

// prefixDiffers returns what in the parse s of an accepted prefix differs
// from the parse full of the whole file, or "". rest is the part of the
// file after the cut. wholeBlocks: the cut is at a legal end point, where
// every QP block is closed, so each of s's blocks must equal the whole
// file's; otherwise each value s has must be the whole file's, unless the
// file prints the key again after the cut.
func prefixDiffers(s, full *Stats, rest []byte, wholeBlocks bool) string {
	later := laterKeys(rest)
	if len(s.QPs) > len(full.QPs) {
		return strconv.Itoa(len(s.QPs)) + " QP blocks, the whole file has " + strconv.Itoa(len(full.QPs))
	}
	for i := range s.QPs {
		q, fq := &s.QPs[i], &full.QPs[i]
		if wholeBlocks && !reflect.DeepEqual(*q, *fq) || !wholeBlocks && !qpValuesIn(q, fq, later) {
			return "QP block " + strconv.Itoa(i) + " is cut or differs: " + qpString(q) + ", whole file: " + qpString(fq)
		}
	}
	for k := range NumDeviceKeys {
		v, ok := s.Device.Get(k)
		if !ok {
			continue
		}
		fv, fok := full.Device.Get(k)
		if !fok {
			return "device counter " + k.String() + " is not in the whole file's parse"
		}
		if v != fv && !later[k.String()] {
			return "device counter " + k.String() + " is " + strconv.FormatUint(v, 10) + ", the whole file's " + strconv.FormatUint(fv, 10)
		}
	}
	if s.HasWriteCount {
		if !full.HasWriteCount {
			return "write count not in the whole file's parse"
		}
		if s.WriteCount != full.WriteCount && !later[writeCount] {
			return "write count is " + strconv.FormatUint(s.WriteCount, 10) + ", the whole file's " + strconv.FormatUint(full.WriteCount, 10)
		}
	}
	if len(s.LIF) > len(full.LIF) {
		return "more LIF counters than the whole file"
	}
	for i, c := range s.LIF {
		fc := full.LIF[i]
		if c.Name != fc.Name {
			return "LIF counter " + strconv.Itoa(i) + " is " + c.Name + ", the whole file's " + fc.Name
		}
		if c.Value != fc.Value && !later[c.Name] {
			return "LIF counter " + c.Name + " is " + strconv.FormatUint(c.Value, 10) + ", the whole file's " + strconv.FormatUint(fc.Value, 10)
		}
	}
	return ""
}

// qpValuesIn tells whether every value of q is fq's (same handle), except
// keys printed again later.
func qpValuesIn(q, fq *QP, later map[string]bool) bool {
	if q.Handle != fq.Handle {
		return false
	}
	for k := range NumQPKeys {
		v, ok := q.Get(k)
		fv, fok := fq.Get(k)
		if ok && (!fok || v != fv && !later[k.String()]) {
			return false
		}
	}
	for _, c := range q.Opcodes {
		i := slices.IndexFunc(fq.Opcodes, func(fc Counter) bool { return fc.Name == c.Name })
		if i < 0 || fq.Opcodes[i].Value != c.Value && !later[c.Name] {
			return false
		}
	}
	return !q.HasOther || fq.HasOther && (q.Other == fq.Other || later[otherOpcodes])
}

// laterKeys returns the keys of the `key : value` lines of rest (stats-file
// line rule), and writeCount when rest has a column-0 `Write count` line.
func laterKeys(rest []byte) map[string]bool {
	keys := map[string]bool{}
	for line := range strings.Lines(string(rest)) {
		if strings.HasPrefix(line, writeCount) {
			keys[writeCount] = true
		}
		l := bytes.TrimSpace([]byte(line))
		if key, _, ok := splitLineRef(l); ok {
			keys[string(key)] = true
		} else if i := bytes.LastIndexByte(l, ':'); i > 0 {
			keys[string(bytes.TrimSpace(l[:i]))] = true // `NAME: N` opcode lines
		}
	}
	return keys
}

func qpString(q *QP) string {
	var b strings.Builder
	b.WriteString("QP " + strconv.FormatUint(uint64(q.Handle), 10) + " {")
	for k := range NumQPKeys {
		if v, ok := q.Get(k); ok {
			b.WriteString(" " + k.String() + "=" + strconv.FormatUint(v, 10))
		}
	}
	for _, c := range q.Opcodes {
		b.WriteString(" " + c.Name + "=" + strconv.FormatUint(c.Value, 10))
	}
	if q.HasOther {
		b.WriteString(" other=" + strconv.FormatUint(q.Other, 10))
	}
	b.WriteString(" }")
	return b.String()
}

// manifestSeeds are instances.json variants of rundir/README.md §2.
var manifestSeeds = []string{
	`{"instances":[]}`,
	`{"instances": []}` + "\n",
	`{"instances": [{"id": 1, "role": "manager", "pid": 4100, "mac": "02:aa:00:00:00:01", "socket": "/run/rocm-ernic/1.sock", "vm": null}]}`,
	`{"instances": [{"id": 2, "role": "worker", "pid": 4117, "mac": "02:aa:00:00:00:02", "socket": "/run/rocm-ernic/2.sock",
	  "vm": {"qmp_socket": "/run/rocm-ernic/qmp-2.sock", "device_id": "ernic2", "root_port": "pcie-vfu.1", "ssh_port": 2223,
	         "ssh_user": "ubuntu", "attached": true, "vm_pid": 5230, "vm_name": "train-a", "launched_at": 1767225600.25, "gpu": "0000:c1:00.0"}}]}`,
	`{"instances": [{"id": 3, "pid": 4200, "vm": {"attached": false, "gpu": ""}, "future_key": {"ignored": true}}]}`,
	`{"instances": [{"id": 1, "pid": 10}, {"id": "2"}, {"pid": 12}, {"id": 0}, {"id": 1, "pid": 14},
	  {"id": 5, "vm": {"vm_pid": "x", "attached": "true", "gpu": ["a"]}}, {"id": 6, "pid": -1}, {"id": 7, "pid": 17.5, "mac": 5}]}`,
	`{"instances": [{"id": 9223372036854775807, "pid": 2147483648}, {"id": 1e3}, {"id": -4}, 5, null, []]}`,
	`{"servers": []}`,
	`{"instances": 5}`,
	`[]`,
	`{"instances": [{"id": 1}]`,
}

func FuzzParseManifest(f *testing.F) {
	addTestdataSeeds(f)
	for _, s := range manifestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, orig []byte) {
		data := bytes.Clone(orig)
		m1, err1 := ParseManifest(data)
		if !bytes.Equal(data, orig) {
			t.Fatal("ParseManifest modified its input")
		}
		for i := range data {
			data[i] ^= 0x55
		}
		m2, err2 := ParseManifest(orig)
		if (m1 == nil) == (err1 == nil) {
			t.Fatalf("ParseManifest returned %v and error %v: want exactly one", m1, err1)
		}
		if !sameError(err1, err2) {
			t.Fatalf("not deterministic: error %v, then %v", err1, err2)
		}
		if !reflect.DeepEqual(m1, m2) {
			t.Fatalf("not deterministic (or the result aliases the input):\n%+v\n%+v", m1, m2)
		}
		if err1 != nil {
			return
		}
		seen := map[int64]bool{}
		for _, inst := range m1.Instances {
			if inst.ID <= 0 || seen[inst.ID] {
				t.Fatalf("id %d: ids must be positive and unique (%+v)", inst.ID, m1.Instances)
			}
			seen[inst.ID] = true
			if inst.PID < 0 || (inst.VM != nil && inst.VM.PID < 0) {
				t.Fatalf("id %d: negative pid in %+v", inst.ID, inst)
			}
			if name := inst.StatsFile(); name != strconv.FormatInt(inst.ID, 10)+".stats" || strings.ContainsAny(name, `/\`) {
				t.Fatalf("id %d: stats file %q", inst.ID, name)
			}
		}
		if len(orig) > maxPrefixCheck {
			return
		}
		// A whole document: every proper prefix, short of trailing
		// whitespace, is what a reader racing the writer sees.
		end := len(bytes.TrimRight(orig, " \t\r\n"))
		for n := range end {
			if _, err := ParseManifest(orig[:n]); !errors.Is(err, ErrIncomplete) {
				t.Fatalf("prefix of %d bytes %q of a valid manifest: error %v, want ErrIncomplete", n, tail(orig[:n]), err)
			}
		}
	})
}

// splitLineRef is the line rule of rundir/README.md §3.1 written plainly, as the parser
// had it before cutLine: split a bytes.TrimSpace-stripped line at the first
// " : " (the first ':' with a space on each side) and strip both halves; a
// line ending in " :" has an empty value.
func splitLineRef(line []byte) (key, val []byte, ok bool) {
	for off := 0; ; {
		j := bytes.IndexByte(line[off:], ':')
		if j < 0 {
			break
		}
		j += off
		if j > 0 && line[j-1] == ' ' && j+1 < len(line) && line[j+1] == ' ' {
			return bytes.TrimSpace(line[:j-1]), bytes.TrimSpace(line[j+2:]), true
		}
		off = j + 1
	}
	if bytes.HasSuffix(line, []byte(" :")) {
		return bytes.TrimSpace(line[:len(line)-2]), nil, true
	}
	return nil, nil, false
}

// FuzzCutLine checks the parser's hand-made line splitting (ASCII fast path,
// Unicode fallback) against splitLineRef on bytes.TrimSpace, for any line.
func FuzzCutLine(f *testing.F) {
	for _, seed := range []string{
		"", " ", "  doorbell_send  : 512", "Write count : 3071", "a : b : c",
		"x:y : z", "key :", "key : ", " : ", "\u00a0key\u00a0 :\u00a0 val\u2003",
		"\tLIF Statistics:", "QP 9:", "a\x85 : \x85b", "\xc2 : \xa0", "k\u3000\t : \v5\f",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.IndexByte(raw, '\n') >= 0 {
			return // one line
		}
		line, key, val, ok := cutLine(raw)
		wantLine := bytes.TrimSpace(raw)
		wantKey, wantVal, wantOK := splitLineRef(wantLine)
		if !bytes.Equal(line, wantLine) || !bytes.Equal(key, wantKey) || !bytes.Equal(val, wantVal) || ok != wantOK {
			t.Fatalf("cutLine(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", raw, line, key, val, ok, wantLine, wantKey, wantVal, wantOK)
		}
	})
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

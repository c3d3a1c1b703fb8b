// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// Helpers shared by the receiver's tests: the fixture (a run directory and
// a proc directory copied into the test's temporary directory), data point
// lookups, and writers of run directories in the server's format
// (internal/rundir/README.md §2-§4), so that the tests need nothing outside
// this module. The writers cover what the tests use: the current format
// with the Instance: block, the 15 device counters, QP blocks with opcode
// lines and an optional `(other opcodes)` line, and a LIF block. The full
// simulator (every format variant, live server processes, faults) is the
// repository's internal/sim.

const (
	// bootTime is btime of testdata/proc/basic/stat.
	bootTime = 1767225000
)

// scrapeNow is the fixed scrape time of the golden tests: 700 s after boot.
var scrapeNow = time.Unix(bootTime+700, 0)

// fixture is a run directory and a proc directory copied into t.TempDir(),
// with file mtimes set so results do not depend on the checkout.
type fixture struct {
	runDir, procDir string
}

func newFixture(t *testing.T, rundir string) *fixture {
	t.Helper()
	f := &fixture{runDir: filepath.Join(t.TempDir(), "run"), procDir: filepath.Join(t.TempDir(), "proc")}
	require.NoError(t, os.CopyFS(f.runDir, os.DirFS(filepath.Join("testdata", "rundir", rundir))))
	require.NoError(t, os.CopyFS(f.procDir, os.DirFS(filepath.Join("testdata", "proc", "basic"))))
	// Each stats file was last written half a second before the scrape.
	entries, err := os.ReadDir(f.runDir)
	require.NoError(t, err)
	for _, e := range entries {
		f.touch(t, e.Name(), scrapeNow.Add(-500*time.Millisecond))
	}
	return f
}

func (f *fixture) touch(t *testing.T, name string, mtime time.Time) {
	t.Helper()
	require.NoError(t, os.Chtimes(filepath.Join(f.runDir, name), mtime, mtime))
}

func (f *fixture) write(t *testing.T, name, content string, mtime time.Time) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(f.runDir, name), []byte(content), 0o644))
	f.touch(t, name, mtime)
}

// setProc writes <procDir>/<pid>/stat with the given state and start time
// in ticks after boot.
func (f *fixture) setProc(t *testing.T, pid int, state string, startTicks int) {
	t.Helper()
	dir := filepath.Join(f.procDir, strconv.Itoa(pid))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	line := strconv.Itoa(pid) + " (rocm-ernic) " + state + " 1 1 1 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 1 0 " +
		strconv.Itoa(startTicks) + " 123456789 1000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644))
}

func (f *fixture) config(opts ...func(*Config)) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.RunDir, cfg.ProcDir = f.runDir, f.procDir
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

// setProcComm writes <procDir>/<pid>/stat of a running process with the
// given comm and start time in ticks after boot.
func (f *fixture) setProcComm(t *testing.T, pid int, comm string, startTicks int) {
	t.Helper()
	dir := filepath.Join(f.procDir, strconv.Itoa(pid))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	line := strconv.Itoa(pid) + " (" + comm + ") S 1 1 1 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 1 0 " +
		strconv.Itoa(startTicks) + " 123456789 1000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644))
}

func newTestScraper(t *testing.T, cfg *Config, now *time.Time) *ernicScraper {
	t.Helper()
	require.NoError(t, cfg.Validate())
	s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	s.now = func() time.Time { return *now }
	require.NoError(t, s.start(context.Background(), nil))
	return s
}

// observedScraper is newTestScraper with its log lines at level and above
// kept.
func observedScraper(t *testing.T, cfg *Config, now *time.Time, level zap.AtomicLevel) (*ernicScraper, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(level)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	s := newScraper(cfg, set)
	s.now = func() time.Time { return *now }
	require.NoError(t, s.start(context.Background(), nil))
	return s, logs
}

func scrapeOK(t *testing.T, s *ernicScraper) pmetric.Metrics {
	t.Helper()
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	return md
}

// forEachPoint calls fn for every number data point of md with its metric.
func forEachPoint(md pmetric.Metrics, fn func(m pmetric.Metric, dp pmetric.NumberDataPoint)) {
	forEachResourcePoint(md, func(_ pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) { fn(m, dp) })
}

// forEachResourcePoint calls fn for every number data point of md with its
// resource's attributes and its metric.
func forEachResourcePoint(md pmetric.Metrics, fn func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint)) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		res := rms.At(i).Resource().Attributes()
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				if m.Type() == pmetric.MetricTypeSum {
					dps = m.Sum().DataPoints()
				} else {
					dps = m.Gauge().DataPoints()
				}
				for l := range dps.Len() {
					fn(res, m, dps.At(l))
				}
			}
		}
	}
}

// points returns the data points with a value (not staleness markers) of
// metric name whose attributes, or whose resource's, include every pair of
// attrs.
func points(md pmetric.Metrics, name string, attrs ...string) []pmetric.NumberDataPoint {
	return matching(md, false, name, attrs...)
}

// stalePoints returns the staleness markers (points flagged NoRecordedValue)
// of metric name whose attributes include every pair of attrs.
func stalePoints(md pmetric.Metrics, name string, attrs ...string) []pmetric.NumberDataPoint {
	return matching(md, true, name, attrs...)
}

// counts returns how many points with a value and how many staleness
// markers md holds.
func counts(md pmetric.Metrics) (values, stale int) {
	forEachPoint(md, func(_ pmetric.Metric, dp pmetric.NumberDataPoint) {
		if dp.Flags().NoRecordedValue() {
			stale++
		} else {
			values++
		}
	})
	return values, stale
}

func matching(md pmetric.Metrics, stale bool, name string, attrs ...string) []pmetric.NumberDataPoint {
	var out []pmetric.NumberDataPoint
	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		if m.Name() != name || dp.Flags().NoRecordedValue() != stale {
			return
		}
		for a := 0; a+1 < len(attrs); a += 2 {
			v, ok := dp.Attributes().Get(attrs[a])
			if !ok {
				v, ok = res.Get(attrs[a])
			}
			if !ok || v.AsString() != attrs[a+1] {
				return
			}
		}
		out = append(out, dp)
	})
	return out
}

// one returns the single data point of name with attrs.
func one(t *testing.T, md pmetric.Metrics, name string, attrs ...string) pmetric.NumberDataPoint {
	t.Helper()
	dps := points(md, name, attrs...)
	require.Len(t, dps, 1, "%s %v", name, attrs)
	return dps[0]
}

func intVal(t *testing.T, md pmetric.Metrics, name string, attrs ...string) int64 {
	t.Helper()
	return one(t, md, name, attrs...).IntValue()
}

// commandsStart returns the start time of instance id's ernic.commands.
func commandsStart(t *testing.T, md pmetric.Metrics, id string) pcommon.Timestamp {
	t.Helper()
	return one(t, md, "ernic.commands", "ernic.id", id).StartTimestamp()
}

func tsOf(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

func replaceLine(t *testing.T, content, old, repl string) string {
	t.Helper()
	require.Contains(t, content, old)
	return strings.Replace(content, old, repl, 1)
}

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

func mustGet(t *testing.T, m pcommon.Map, k string) pcommon.Value {
	t.Helper()
	v, ok := m.Get(k)
	require.True(t, ok, k)
	return v
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/scraper")

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

func newTestScraper(t *testing.T, cfg *Config, now *time.Time) *ernicScraper {
	t.Helper()
	require.NoError(t, cfg.Validate())
	s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	s.now = func() time.Time { return *now }
	require.NoError(t, s.start(context.Background(), nil))
	return s
}

func TestScrapeGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		golden string
		cfg    func(*Config)
	}{
		{"default metrics", "expected.yaml", func(*Config) {}},
		{"every metric", "expected_all.yaml", func(c *Config) { c.Metrics.ErnicQpWqesByOpcode.Enabled = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "basic")
			now := scrapeNow
			s := newTestScraper(t, f.config(tc.cfg), &now)
			actual, err := s.scrape(context.Background())
			require.NoError(t, err)

			path := filepath.Join("testdata", "scraper", tc.golden)
			if *update {
				require.NoError(t, golden.WriteMetrics(t, path, actual, golden.SkipMetricTimestampNormalization()))
			}
			expected, err := golden.ReadMetrics(path)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(expected, actual,
				pmetrictest.IgnoreResourceMetricsOrder(),
				pmetrictest.IgnoreMetricsOrder(),
				pmetrictest.IgnoreMetricDataPointsOrder(),
			))
		})
	}
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

// The values of the golden file, spelled out for the fields that matter most.
func TestScrapeValues(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) { c.Metrics.ErnicQpWqesByOpcode.Enabled = true }), &now)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)

	assert.Equal(t, int64(3), intVal(t, md, "ernic.instances"))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.vms"))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "1", "role", "manager", "mac", "02:aa:00:00:00:01"))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "2", "role", "worker"))
	assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "3", "role", "unknown", "mac", "02:AA:00:00:00:03"), "zombie")
	assert.InDelta(t, 690.0, one(t, md, "ernic.instance.uptime", "ernic.id", "1").DoubleValue(), 1e-9)
	assert.InDelta(t, 674.5, one(t, md, "ernic.instance.uptime", "ernic.id", "2").DoubleValue(), 1e-9)
	assert.Empty(t, points(md, "ernic.instance.uptime", "ernic.id", "3"), "no uptime for a dead process")

	assert.Equal(t, int64(0), intVal(t, md, "ernic.vm.attached", "ernic.id", "1", "vm.name", ""))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.vm.attached", "ernic.id", "2", "vm.name", "train-a"))
	assert.Equal(t, int64(0), intVal(t, md, "ernic.vm.attached", "ernic.id", "3", "vm.name", ""))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.vm.gpu_passthrough", "ernic.id", "2"))
	assert.Len(t, points(md, "ernic.vm.gpu_passthrough"), 1, "attached VMs only")
	assert.InDelta(t, 99.75, one(t, md, "ernic.vm.uptime", "ernic.id", "2").DoubleValue(), 1e-6)

	w := []string{"ernic.id", "2", "role", "worker"}
	assert.Equal(t, int64(1), intVal(t, md, "ernic.connection.up", append(w, "state", "connected (PCI FLR)")...))
	assert.Equal(t, int64(0), intVal(t, md, "ernic.connection.up", "ernic.id", "1", "state", "(not set)"))
	assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.count", w...))
	assert.Equal(t, int64(0), intVal(t, md, "ernic.qp.count", "ernic.id", "1"))
	assert.Equal(t, int64(512044), intVal(t, md, "ernic.ip.bytes.tx", w...))
	assert.Equal(t, int64(498230), intVal(t, md, "ernic.ip.bytes.rx", w...))
	assert.Equal(t, int64(512044+498230), intVal(t, md, "ernic.ip.bytes", w...))
	assert.Equal(t, int64(2097152), intVal(t, md, "ernic.rdma.bytes.sent", w...))
	assert.Equal(t, int64(1048576), intVal(t, md, "ernic.rdma.bytes.received", w...))
	assert.Equal(t, int64(4194304), intVal(t, md, "ernic.rdma.bytes.read", w...))
	assert.Equal(t, int64(8388608), intVal(t, md, "ernic.rdma.bytes.write", w...))
	assert.Equal(t, int64(2097152+1048576+4194304+8388608), intVal(t, md, "ernic.rdma.bytes", w...))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.flr.reset", w...))
	assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", w...))
	assert.Equal(t, int64(10440), intVal(t, md, "ernic.interrupts", w...))
	assert.Equal(t, int64(48810), intVal(t, md, "ernic.mmio.reads", w...))
	assert.Equal(t, int64(46951), intVal(t, md, "ernic.mmio.writes", w...))
	assert.Equal(t, int64(3071), intVal(t, md, "ernic.stats.writes", w...))
	assert.InDelta(t, 0.5, one(t, md, "ernic.stats.age", w...).DoubleValue(), 1e-9)
	assert.Equal(t, int64(2), intVal(t, md, "ernic.lif.counter", append(w, "counter", "rdma_req_rx_cqe_err")...))
	assert.Equal(t, int64(7), intVal(t, md, "ernic.lif.counter", append(w, "counter", "rx_rdma_future_counter")...))
	assert.Len(t, points(md, "ernic.lif.counter"), 7)

	q9 := append(w, "qp", "9")
	assert.Equal(t, int64(512), intVal(t, md, "ernic.qp.doorbell.send", q9...))
	assert.Equal(t, int64(256), intVal(t, md, "ernic.qp.doorbell.recv", q9...))
	assert.Equal(t, int64(771), intVal(t, md, "ernic.qp.wqes.processed", q9...))
	assert.Equal(t, int64(768), intVal(t, md, "ernic.qp.cqes.posted", q9...))
	assert.Equal(t, int64(2097152), intVal(t, md, "ernic.qp.bytes.sent", q9...))
	assert.Equal(t, int64(1048576), intVal(t, md, "ernic.qp.bytes.received", q9...))
	assert.Equal(t, int64(0), intVal(t, md, "ernic.qp.bytes.rdma_read", q9...))
	assert.Equal(t, int64(8388608), intVal(t, md, "ernic.qp.bytes.rdma_write", q9...))
	assert.Equal(t, int64(4194304), intVal(t, md, "ernic.qp.bytes.rdma_read", append(w, "qp", "4")...))
	assert.Equal(t, int64(256), intVal(t, md, "ernic.qp.wqes.by_opcode", append(q9, "opcode", "RDMA_WRITE")...))
	assert.Equal(t, int64(3), intVal(t, md, "ernic.qp.wqes.by_opcode", append(q9, "opcode", "other")...))
	assert.Empty(t, points(md, "ernic.qp.wqes.by_opcode", "qp", "4", "opcode", "other"), "a wrapped (other opcodes) is dropped")
	assert.Len(t, points(md, "ernic.qp.wqes.by_opcode"), 5)

	// Orphan and non-instance files are never read: 7.stats has commands
	// 999999, and nothing else publishes a commands value for an id 7.
	assert.Empty(t, points(md, "ernic.commands", "ernic.id", "7"))
	assert.Len(t, points(md, "ernic.commands"), 2)
	assert.Empty(t, points(md, "ernic.qp.count", "ernic.id", "3"), "no stats file: no device metrics")

	// Counters start at the owning process's start: btime + starttime ticks.
	for _, dp := range points(md, "ernic.commands", "ernic.id", "2") {
		assert.Equal(t, pcommon.NewTimestampFromTime(time.Unix(bootTime+25, 500_000_000)), dp.StartTimestamp())
	}
	assert.Equal(t, pcommon.NewTimestampFromTime(time.Unix(bootTime+10, 0)), one(t, md, "ernic.commands", "ernic.id", "1").StartTimestamp())
	assert.Equal(t, pcommon.NewTimestampFromTime(time.Unix(bootTime+25, 500_000_000)), one(t, md, "ernic.qp.bytes.sent", q9...).StartTimestamp())
	assert.Equal(t, pcommon.NewTimestampFromTime(scrapeNow), one(t, md, "ernic.commands", w...).Timestamp())
}

func TestScrapeFormatVariants(t *testing.T) {
	for _, tc := range []struct {
		file   string
		checks func(t *testing.T, md pmetric.Metrics)
	}{
		{"old-format.stats", func(t *testing.T, md pmetric.Metrics) {
			assert.Equal(t, int64(2), intVal(t, md, "ernic.flr.reset"), "flr_reset_count")
			assert.Equal(t, int64(900), intVal(t, md, "ernic.mmio.reads"), "regs_reads")
			assert.Equal(t, int64(300), intVal(t, md, "ernic.mmio.writes"), "regs_writes")
			assert.Equal(t, int64(12), intVal(t, md, "ernic.stats.writes"))
			assert.Empty(t, points(md, "ernic.ip.bytes.tx"), "absent, not zero")
			assert.Empty(t, points(md, "ernic.ip.bytes"))
			assert.Equal(t, int64(1000), intVal(t, md, "ernic.rdma.bytes"))
			assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.wqes.by_opcode", "opcode", "ATOMIC_FETCH_AND_ADD"))
			assert.Equal(t, int64(1), intVal(t, md, "ernic.qp.wqes.by_opcode", "opcode", "other"))
		}},
		{"no-qps-old.stats", func(t *testing.T, md pmetric.Metrics) {
			assert.Equal(t, int64(0), intVal(t, md, "ernic.qp.count"))
			assert.Equal(t, int64(0), intVal(t, md, "ernic.connection.up", "state", "disconnected (client closed)"))
		}},
		{"trailing-sections.stats", func(t *testing.T, md pmetric.Metrics) {
			assert.Equal(t, int64(1), intVal(t, md, "ernic.qp.count"))
			assert.Equal(t, int64(4), intVal(t, md, "ernic.qp.bytes.sent"))
			assert.Equal(t, int64(4), intVal(t, md, "ernic.lif.counter", "counter", "rx_dma_error"))
			assert.Equal(t, int64(11), intVal(t, md, "ernic.lif.counter", "counter", "tx_rdma_ucast_packets"))
			assert.Len(t, points(md, "ernic.lif.counter"), 3)
		}},
		{"overflow.stats", func(t *testing.T, md pmetric.Metrics) {
			assert.Empty(t, points(md, "ernic.commands"), "2^63 is not published")
			assert.Equal(t, int64(9223372036854775807), intVal(t, md, "ernic.interrupts"), "2^63-1 is")
			assert.Empty(t, points(md, "ernic.rdma.bytes.sent"))
			assert.Empty(t, points(md, "ernic.rdma.bytes"), "a sum past 2^64 is not published")
			assert.Equal(t, int64(1), intVal(t, md, "ernic.rdma.bytes.received"))
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := newFixture(t, "basic")
			data, err := os.ReadFile(filepath.Join("testdata", "stats", tc.file))
			require.NoError(t, err)
			f.write(t, "1.stats", string(data), scrapeNow.Add(-time.Second))
			f.write(t, "instances.json", `{"instances":[{"id":1,"role":"manager","pid":4100,"mac":"m","vm":null}]}`, scrapeNow)
			now := scrapeNow
			s := newTestScraper(t, f.config(func(c *Config) { c.Metrics.ErnicQpWqesByOpcode.Enabled = true }), &now)
			md, err := s.scrape(context.Background())
			require.NoError(t, err)
			tc.checks(t, md)
		})
	}
}

func TestScrapeQPLimit(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) { c.MaxQPsPerInstance = 1 }), &now)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	w := []string{"ernic.id", "2"}
	assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.count", w...), "the count is the file's")
	assert.Equal(t, int64(1), intVal(t, md, "ernic.qp.unpublished", w...))
	assert.Equal(t, int64(0), intVal(t, md, "ernic.qp.unpublished", "ernic.id", "1"))
	dps := points(md, "ernic.qp.bytes.sent", w...)
	require.Len(t, dps, 1)
	qp, _ := dps[0].Attributes().Get("qp")
	assert.Equal(t, "4", qp.Str(), "the lowest handle is kept, whatever the file order")
}

// commandsStart returns the start time of instance id's ernic.commands.
func commandsStart(t *testing.T, md pmetric.Metrics, id string) pcommon.Timestamp {
	t.Helper()
	return one(t, md, "ernic.commands", "ernic.id", id).StartTimestamp()
}

func tsOf(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

func scrapeOK(t *testing.T, s *ernicScraper) pmetric.Metrics {
	t.Helper()
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	return md
}

func replaceLine(t *testing.T, content, old, repl string) string {
	t.Helper()
	require.Contains(t, content, old)
	return strings.Replace(content, old, repl, 1)
}

func TestCounterStartTimes(t *testing.T) {
	stats2, err := os.ReadFile(filepath.Join("testdata", "rundir", "basic", "2.stats"))
	require.NoError(t, err)
	manifest := func(pid int) string {
		return `{"instances":[{"id":2,"role":"worker","pid":` + strconv.Itoa(pid) + `,"mac":"m","vm":null}]}`
	}

	t.Run("process start from proc", func(t *testing.T) {
		f := newFixture(t, "basic")
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		md := scrapeOK(t, s)
		assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, md, "2"))
	})

	t.Run("fallback to first sight, kept while the pid stays", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(6000), scrapeNow) // no /proc entry
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		md := scrapeOK(t, s)
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
		assert.Equal(t, tsOf(scrapeNow), commandsStart(t, md, "2"))
		now = now.Add(5 * time.Second)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "commands                : 211", "commands                : 300"), now)
		md = scrapeOK(t, s)
		assert.Equal(t, tsOf(scrapeNow), commandsStart(t, md, "2"))
		assert.Equal(t, int64(300), intVal(t, md, "ernic.commands"))
	})

	t.Run("new pid", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(4117), scrapeNow)
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		first := commandsStart(t, scrapeOK(t, s), "2")

		// ernicctl hot-reload: a new server process, counters from zero.
		now = now.Add(10 * time.Second)
		f.setProc(t, 4300, "S", 70500) // started at boot+705 s
		f.write(t, "instances.json", manifest(4300), now)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "commands                : 211", "commands                : 5"), now)
		md := scrapeOK(t, s)
		assert.Equal(t, tsOf(time.Unix(bootTime+705, 0)), commandsStart(t, md, "2"))
		assert.NotEqual(t, first, commandsStart(t, md, "2"))
		assert.Equal(t, int64(5), intVal(t, md, "ernic.commands"))
	})

	t.Run("stats file of the previous process is not published", func(t *testing.T) {
		f := newFixture(t, "basic")
		now := scrapeNow
		f.setProc(t, 4300, "S", 69000)                    // started at boot+690 s
		f.write(t, "instances.json", manifest(4300), now) // the new pid
		f.touch(t, "2.stats", time.Unix(bootTime+600, 0)) // written by the old one
		s := newTestScraper(t, f.config(), &now)
		md := scrapeOK(t, s)
		assert.Empty(t, points(md, "ernic.commands"))
		assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))

		now = now.Add(time.Second)
		f.touch(t, "2.stats", now) // the new process wrote
		md = scrapeOK(t, s)
		assert.Equal(t, int64(211), intVal(t, md, "ernic.commands"))
		assert.Equal(t, tsOf(time.Unix(bootTime+690, 0)), commandsStart(t, md, "2"))
	})

	t.Run("pid reuse: same pid, other start time", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(4117), scrapeNow)
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, scrapeOK(t, s), "2"))

		now = now.Add(10 * time.Second)
		f.setProc(t, 4117, "S", 70800)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "commands                : 211", "commands                : 1"), now)
		md := scrapeOK(t, s)
		assert.Equal(t, tsOf(time.Unix(bootTime+708, 0)), commandsStart(t, md, "2"))
	})

	t.Run("a counter going down starts a new start time", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(4117), scrapeNow)
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		scrapeOK(t, s)

		prev := now
		now = now.Add(5 * time.Second)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "interrupts              : 10440", "interrupts              : 10"), now)
		md := scrapeOK(t, s)
		assert.Equal(t, tsOf(prev), commandsStart(t, md, "2"), "the new start is the last read of the old values")
		assert.Equal(t, int64(10), intVal(t, md, "ernic.interrupts"))

		// Steady again: the start stays.
		now = now.Add(5 * time.Second)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "interrupts              : 10440", "interrupts              : 20"), now)
		md = scrapeOK(t, s)
		assert.Equal(t, tsOf(prev), commandsStart(t, md, "2"))
	})
}

func TestScrapeTornFileKeepsLastSnapshot(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	s.reader.Backoff = []time.Duration{0, 0}
	md := scrapeOK(t, s)
	require.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"))

	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name, torn string
		reported   bool // a new kind of fault for this file
	}{
		{"empty", "", true},
		{"cut in a line", string(whole[:900]), false},
		{"cut at a QP end", string(whole[:strings.Index(string(whole), "  QP 4:")]), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = now.Add(time.Second)
			f.write(t, "2.stats", tc.torn, now)
			md, err := s.scrape(context.Background())
			if tc.reported {
				require.Error(t, err)
				assert.True(t, scrapererror.IsPartialScrapeError(err))
				assert.Contains(t, err.Error(), "2.stats")
				assert.Contains(t, err.Error(), "publishing the last complete read")
			} else {
				require.Error(t, err)
				assert.True(t, onlyReported(err), "the same kind of fault is reported once per %s: %v", faultInterval, err)
			}
			assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"), "the last complete read")
			assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.count", "ernic.id", "2"))
			assert.Len(t, points(md, "ernic.qp.bytes.sent", "ernic.id", "2"), 2)
			assert.Equal(t, int64(0), intVal(t, md, "ernic.commands", "ernic.id", "1"), "the other instance is unaffected")
		})
	}

	// After the interval the persisting fault is reported again.
	now = now.Add(faultInterval)
	_, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "2.stats")
}

func TestScrapeRunDirVanishesAndReturns(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	published, _ := counts(scrapeOK(t, s))

	backup := f.runDir + ".bak"
	require.NoError(t, os.Rename(f.runDir, backup))
	now = now.Add(5 * time.Second)
	md, err := s.scrape(context.Background())
	require.NoError(t, err, "an expected state, logged once at Info (TestExpectedStatesNotErrors)")
	values, stale := counts(md)
	assert.Equal(t, 0, values)
	assert.Equal(t, published, stale, "every series of the last scrape ends with a staleness marker")

	// Reported once per interval, not every scrape; the series stay ended.
	now = now.Add(5 * time.Second)
	md, err = s.scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, md.DataPointCount())

	require.NoError(t, os.Rename(backup, f.runDir))
	now = now.Add(5 * time.Second)
	md = scrapeOK(t, s)
	assert.Equal(t, int64(3), intVal(t, md, "ernic.instances"))
	assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"))
}

func TestScrapeManifestProblems(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	scrapeOK(t, s)

	// A torn manifest falls back to the last complete one.
	now = now.Add(time.Second)
	f.write(t, "instances.json", `{"instances": [`, now)
	s.reader.Backoff = []time.Duration{0}
	md, err := s.scrape(context.Background())
	require.ErrorContains(t, err, "using the last complete manifest")
	assert.True(t, scrapererror.IsPartialScrapeError(err))
	assert.Equal(t, int64(3), intVal(t, md, "ernic.instances"))

	// An unusable entry is left out; the others are published.
	now = now.Add(time.Second)
	f.write(t, "instances.json", `{"instances": [{"id": "x"}, {"id": 2, "role": "worker", "pid": 4117}]}`, now)
	md, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "instances[0]")
	assert.Equal(t, int64(1), intVal(t, md, "ernic.instances"))
	assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"))
}

func TestScrapeNoManifestYet(t *testing.T) {
	f := newFixture(t, "basic")
	require.NoError(t, os.Remove(filepath.Join(f.runDir, "instances.json")))
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	md, err := s.scrape(context.Background())
	require.NoError(t, err, "an expected state, logged once at Info (TestExpectedStatesNotErrors)")
	assert.Equal(t, 0, md.DataPointCount(), "stats files without a manifest entry are not read")
}

func TestStartRejectsBadProcDir(t *testing.T) {
	f := newFixture(t, "basic")
	cfg := f.config(func(c *Config) { c.ProcDir = filepath.Join(t.TempDir(), "missing") })
	s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.ErrorContains(t, s.start(context.Background(), nil), "set proc_dir to the host's proc filesystem")
}

// A file with fewer QPs than the last read of the same process is a torn
// read; one that stays that way for shrunkLimit scrapes is taken as it is.
func TestScrapeShrunkFile(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	s.reader.Backoff = nil
	require.Equal(t, int64(2), intVal(t, scrapeOK(t, s), "ernic.qp.count", "ernic.id", "2"))

	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	qp4 := strings.Index(string(whole), "  QP 4:")
	lif := strings.Index(string(whole), "LIF Statistics:")
	oneQP := string(whole[:qp4]) + string(whole[lif:])
	for i := range shrunkLimit {
		now = now.Add(time.Second)
		f.write(t, "2.stats", oneQP, now)
		md, err := s.scrape(context.Background())
		if i == 0 {
			require.ErrorContains(t, err, "lost QP blocks")
		}
		assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.count", "ernic.id", "2"), "scrape %d keeps the last read", i)
	}
	now = now.Add(time.Second)
	f.write(t, "2.stats", oneQP, now)
	md := scrapeOK(t, s)
	assert.Equal(t, int64(1), intVal(t, md, "ernic.qp.count", "ernic.id", "2"))
	assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, md, "2"), "no counter went down: same start")
}

// A counter above 2^63-1 is logged once per server process, not per scrape.
func TestScrapeOverflowLoggedOnce(t *testing.T) {
	f := newFixture(t, "basic")
	data, err := os.ReadFile(filepath.Join("testdata", "stats", "overflow.stats"))
	require.NoError(t, err)
	f.write(t, "1.stats", string(data), scrapeNow.Add(-time.Second))
	f.write(t, "instances.json", `{"instances":[{"id":1,"role":"manager","pid":4100,"mac":"m","vm":null}]}`, scrapeNow)

	core, logs := observer.New(zap.WarnLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	now := scrapeNow
	s := newScraper(f.config(), set)
	s.now = func() time.Time { return now }
	require.NoError(t, s.start(context.Background(), nil))
	for range 3 {
		scrapeOK(t, s)
		now = now.Add(5 * time.Second)
	}
	var counters []string
	for _, e := range logs.All() {
		counters = append(counters, e.ContextMap()["counter"].(string))
	}
	// The sum ernic.rdma.bytes is left out without a line of its own: its
	// part total_bytes_sent is the one logged.
	assert.ElementsMatch(t, []string{"commands", "total_bytes_sent"}, counters)
}

// ernicctl hot-reload: the old process's last file, written within the
// second that the /proc start time may be early by, is not the new one's.
func TestScrapeHotReloadLeftoverFile(t *testing.T) {
	stats2, err := os.ReadFile(filepath.Join("testdata", "rundir", "basic", "2.stats"))
	require.NoError(t, err)
	manifest := func(pid int) string {
		return `{"instances":[{"id":2,"role":"worker","pid":` + strconv.Itoa(pid) + `,"mac":"m","vm":null}]}`
	}
	f := newFixture(t, "basic")
	f.write(t, "instances.json", manifest(4117), scrapeNow)
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	require.Equal(t, int64(3071), intVal(t, scrapeOK(t, s), "ernic.stats.writes"))

	// The old process's shutdown write lands 0.4 s after the new process's
	// computed start.
	now = now.Add(5 * time.Second)
	f.setProc(t, 4300, "S", 70400) // boot+704 s
	f.write(t, "instances.json", manifest(4300), now)
	shutdown := replaceLine(t, string(stats2), "Write count : 3071", "Write count : 3072")
	f.write(t, "2.stats", shutdown, time.Unix(bootTime+704, 400_000_000))
	md := scrapeOK(t, s)
	assert.Empty(t, points(md, "ernic.commands"), "the old process's counters are not published under the new start")

	// The new process's startup file, in the same second: published.
	now = now.Add(time.Second)
	startup, err := os.ReadFile(filepath.Join("testdata", "rundir", "basic", "1.stats"))
	require.NoError(t, err)
	f.write(t, "2.stats", string(startup), time.Unix(bootTime+704, 600_000_000))
	md = scrapeOK(t, s)
	assert.Equal(t, int64(0), intVal(t, md, "ernic.stats.writes"))
	assert.Equal(t, tsOf(time.Unix(bootTime+704, 0)), commandsStart(t, md, "2"))
}

func TestScrapeOpcodeCounters(t *testing.T) {
	stats2, err := os.ReadFile(filepath.Join("testdata", "rundir", "basic", "2.stats"))
	require.NoError(t, err)
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) { c.Metrics.ErnicQpWqesByOpcode.Enabled = true }), &now)
	q9 := []string{"ernic.id", "2", "qp", "9"}
	md := scrapeOK(t, s)
	require.Equal(t, int64(3), intVal(t, md, "ernic.qp.wqes.by_opcode", append(q9, "opcode", "other")...))

	// `(other opcodes)` is derived and may dip: the published value holds.
	now = now.Add(5 * time.Second)
	f.write(t, "2.stats", replaceLine(t, string(stats2), "(other opcodes)       : 3", "(other opcodes)       : 1"), now)
	md = scrapeOK(t, s)
	assert.Equal(t, int64(3), intVal(t, md, "ernic.qp.wqes.by_opcode", append(q9, "opcode", "other")...))
	assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, md, "2"), "a dip of other is no reset")

	// A real opcode counter going down is a reset.
	prev := now
	now = now.Add(5 * time.Second)
	f.write(t, "2.stats", replaceLine(t, string(stats2), "SEND                  : 512", "SEND                  : 500"), now)
	md = scrapeOK(t, s)
	assert.Equal(t, int64(500), intVal(t, md, "ernic.qp.wqes.by_opcode", append(q9, "opcode", "SEND")...))
	assert.Equal(t, tsOf(prev), commandsStart(t, md, "2"))
}

func TestScrapeImplausibleLaunchedAt(t *testing.T) {
	for _, launched := range []string{"1900000000", "-5", "1e20", "1767225600250"} {
		t.Run(launched, func(t *testing.T) {
			f := newFixture(t, "basic")
			f.write(t, "instances.json", `{"instances":[{"id":2,"role":"worker","pid":4117,"vm":{"attached":true,"vm_pid":5230,"launched_at":`+launched+`}}]}`, scrapeNow)
			now := scrapeNow
			s := newTestScraper(t, f.config(), &now)
			md, err := s.scrape(context.Background())
			require.ErrorContains(t, err, "vm.launched_at")
			// The age of vm_pid 5230 (started at boot+600 s) instead.
			assert.InDelta(t, 100.0, one(t, md, "ernic.vm.uptime").DoubleValue(), 1e-9)
		})
	}
}

// A process first seen by the receiver, whose file was written within a
// second of its start, is published at once: without a previous process
// there is nobody else the file could belong to.
func TestScrapeFreshProcessFile(t *testing.T) {
	f := newFixture(t, "basic")
	f.setProc(t, 4300, "S", 69950) // boot+699.5 s
	f.write(t, "instances.json", `{"instances":[{"id":2,"role":"worker","pid":4300}]}`, scrapeNow)
	f.touch(t, "2.stats", time.Unix(bootTime+699, 900_000_000))
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	assert.Equal(t, int64(3071), intVal(t, scrapeOK(t, s), "ernic.stats.writes"))
}

// A stats file that is a symbolic link out of the run directory is refused
// and reported; the other instances are published.
func TestScrapeSymlinkOutOfRunDir(t *testing.T) {
	f := newFixture(t, "basic")
	outside := filepath.Join(t.TempDir(), "elsewhere.stats")
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(outside, whole, 0o644))
	require.NoError(t, os.Remove(filepath.Join(f.runDir, "2.stats")))
	rel, err := filepath.Rel(f.runDir, outside)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(rel, filepath.Join(f.runDir, "2.stats")))

	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	md, err := s.scrape(context.Background())
	require.ErrorContains(t, err, filepath.Join(f.runDir, "2.stats"))
	assert.Empty(t, points(md, "ernic.commands", "ernic.id", "2"))
	assert.Equal(t, int64(0), intVal(t, md, "ernic.commands", "ernic.id", "1"))
}

// cutLabel is a value as max_label_length max leaves it: its first bytes
// (at a UTF-8 boundary) and "~" with 8 hex digits of its FNV-1a hash.
func cutLabel(v string, max int, keep int) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(v))
	out := fmt.Sprintf("%s~%08x", v[:keep], h.Sum32())
	if len(out) > max {
		panic("cutLabel: keep too long")
	}
	return out
}

// An attribute value from the run directory longer than max_label_length is
// cut, at a UTF-8 boundary, with a hash of the whole value, and counted.
func TestScrapeLabelCap(t *testing.T) {
	f := newFixture(t, "basic")
	long := strings.Repeat("r", 11) + "é" + strings.Repeat("x", 10)
	f.write(t, "instances.json", `{"instances":[{"id":2,"role":"`+long+`","pid":4117,"mac":"m","vm":{"attached":true,"vm_name":"`+strings.Repeat("v", 40)+`"}}]}`, scrapeNow)
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	f.write(t, "2.stats", replaceLine(t, string(whole), "rx_ucast_bytes : 498230", strings.Repeat("c", 30)+" : 498230"), scrapeNow)
	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) { c.MaxLabelLength = 21 }), &now)
	md := scrapeOK(t, s)
	role := cutLabel(long, 21, 11) // the 2-byte é would pass 12 bytes
	// role, vm_name, the long LIF name, and the fixture's own
	// rx_rdma_future_counter (22 bytes).
	assert.Equal(t, int64(4), intVal(t, md, "ernic.labels.truncated", "ernic.id", "2", "role", role))
	assert.Equal(t, int64(7), intVal(t, md, "ernic.lif.counter", "counter", cutLabel("rx_rdma_future_counter", 21, 12)))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.vm.attached", "ernic.id", "2", "vm.name", cutLabel(strings.Repeat("v", 40), 21, 12)))
	assert.Equal(t, int64(498230), intVal(t, md, "ernic.lif.counter", "counter", cutLabel(strings.Repeat("c", 30), 21, 12)))

	// The last good manifest, reused while the file is torn, counts its
	// cut values again (they were once cut in place on it).
	f.write(t, "instances.json", `{"instances":[`, scrapeNow.Add(time.Second))
	now = now.Add(5 * time.Second)
	md, err = s.scrape(context.Background())
	require.Error(t, err)
	assert.Equal(t, int64(4), intVal(t, md, "ernic.labels.truncated", "ernic.id", "2", "role", role))
}

// Two names that share their first max_label_length bytes stay two series,
// each with its own value: never one, summed or overwritten.
func TestScrapeLabelCapKeepsDistinct(t *testing.T) {
	f := newFixture(t, "basic")
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	a, b := strings.Repeat("q", 40)+"_a", strings.Repeat("q", 40)+"_b"
	text := replaceLine(t, string(whole), "rx_ucast_bytes : 498230", a+" : 5")
	text = replaceLine(t, text, "tx_ucast_bytes : 512044", b+" : 7")
	f.write(t, "2.stats", text, scrapeNow)
	now := scrapeNow
	md := scrapeOK(t, newTestScraper(t, f.config(func(c *Config) { c.MaxLabelLength = 21 }), &now))
	assert.Equal(t, int64(5), intVal(t, md, "ernic.lif.counter", "ernic.id", "2", "counter", cutLabel(a, 21, 12)))
	assert.Equal(t, int64(7), intVal(t, md, "ernic.lif.counter", "ernic.id", "2", "counter", cutLabel(b, 21, 12)))
}

// An unchanged stats file (same inode, size and mtime, written well before
// the last read) is not read again; the test proves it by changing the
// content behind the receiver's back and restoring the mtime, which a real
// writer cannot do.
func TestScrapeSkipsUnchangedFile(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	require.Equal(t, int64(211), intVal(t, scrapeOK(t, s), "ernic.commands", "ernic.id", "2"))

	path := filepath.Join(f.runDir, "2.stats")
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	same := replaceLine(t, string(whole), "commands                : 211", "commands                : 999")
	require.NoError(t, os.WriteFile(path, []byte(same), 0o644)) // in place: same inode
	f.touch(t, "2.stats", fi.ModTime())

	now = now.Add(5 * time.Second)
	md := scrapeOK(t, s)
	assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"), "not read again")
	assert.InDelta(t, 5.5, one(t, md, "ernic.stats.age", "ernic.id", "2").DoubleValue(), 1e-9)

	// A real write moves the mtime: read again.
	f.touch(t, "2.stats", now)
	now = now.Add(5 * time.Second)
	assert.Equal(t, int64(999), intVal(t, scrapeOK(t, s), "ernic.commands", "ernic.id", "2"))
}

// A file written within unchangedMargin before its read may be rewritten in
// the same clock tick: it is read again even when size and mtime match.
func TestScrapeRereadsRecentFile(t *testing.T) {
	f := newFixture(t, "basic")
	f.touch(t, "2.stats", scrapeNow.Add(-10*time.Millisecond))
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	require.Equal(t, int64(211), intVal(t, scrapeOK(t, s), "ernic.commands", "ernic.id", "2"))

	path := filepath.Join(f.runDir, "2.stats")
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(replaceLine(t, string(whole), "commands                : 211", "commands                : 999")), 0o644))
	f.touch(t, "2.stats", scrapeNow.Add(-10*time.Millisecond))
	now = now.Add(5 * time.Second)
	assert.Equal(t, int64(999), intVal(t, scrapeOK(t, s), "ernic.commands", "ernic.id", "2"))
}

// The run directory vanishing and coming back with the same server
// processes keeps their state: start times, and the held (other opcodes).
func TestScrapeRunDirBackSameProcesses(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) { c.Metrics.ErnicQpWqesByOpcode.Enabled = true }), &now)
	q9 := []string{"ernic.id", "2", "qp", "9", "opcode", "other"}
	require.Equal(t, int64(3), intVal(t, scrapeOK(t, s), "ernic.qp.wqes.by_opcode", q9...))

	backup := f.runDir + ".bak"
	require.NoError(t, os.Rename(f.runDir, backup))
	now = now.Add(5 * time.Second)
	_, _ = s.scrape(context.Background())
	require.NoError(t, os.Rename(backup, f.runDir))
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	now = now.Add(5 * time.Second)
	f.write(t, "2.stats", replaceLine(t, string(whole), "(other opcodes)       : 3", "(other opcodes)       : 1"), now)
	md := scrapeOK(t, s)
	assert.Equal(t, int64(3), intVal(t, md, "ernic.qp.wqes.by_opcode", q9...), "the held value survives")
	assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, md, "2"))
}

// With an attribute turned off (the generated `attributes` setting), the
// builder folds the points that become alike; the scrape is then recorded
// in one piece, so that they fold across what would be separate pieces (16
// LIF counters, 16 QPs).
func TestReaggregationAcrossPieces(t *testing.T) {
	f := newFixture(t, "basic")
	stats, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	// 40 more LIF counters: 47 in all, three pieces of 16.
	var extra strings.Builder
	wantLIF := int64(0)
	for i := range 40 {
		fmt.Fprintf(&extra, "  rx_extra_%02d : %d\n", i, i+1)
		wantLIF += int64(i + 1)
	}
	content := strings.Replace(string(stats), "  rx_rdma_future_counter : 7\n", "  rx_rdma_future_counter : 7\n"+extra.String(), 1)
	// 20 more QPs: 22 in all, two pieces of 16.
	var qps strings.Builder
	for i := range 20 {
		fmt.Fprintf(&qps, "  QP %d:\n    bytes_sent     : %d\n\n", 100+i, 1000*(i+1))
	}
	content = strings.Replace(content, "LIF Statistics:\n", qps.String()+"LIF Statistics:\n", 1)
	f.write(t, "2.stats", content, scrapeNow.Add(-500*time.Millisecond))
	parsed, err := rundir.ParseStats([]byte(content))
	require.NoError(t, err)
	for _, c := range parsed.LIF[:7] {
		wantLIF += int64(c.Value)
	}
	require.Len(t, parsed.LIF, 47)
	require.Len(t, parsed.QPs, 22)

	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) {
		c.Metrics.ErnicLifCounter.EnabledAttributes = []metadata.ErnicLifCounterMetricAttributeKey{}
		c.Metrics.ErnicQpBytesSent.EnabledAttributes = []metadata.ErnicQpBytesSentMetricAttributeKey{}
	}), &now)
	assert.Nil(t, s.bulk, "a metric with an attribute off is recorded by the builder")
	md := scrapeOK(t, s)
	lif := map[string][]int64{}
	sent := map[string][]int64{}
	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		id, _ := res.Get("ernic.id")
		switch m.Name() {
		case "ernic.lif.counter":
			lif[id.Str()] = append(lif[id.Str()], dp.IntValue())
		case "ernic.qp.bytes.sent":
			sent[id.Str()] = append(sent[id.Str()], dp.IntValue())
		}
	})
	assert.Equal(t, []int64{wantLIF}, lif["2"], "one point: the sum of the 47 LIF counters")
	wantSent := int64(0)
	for i := range parsed.QPs {
		v, _ := parsed.QPs[i].Get(rundir.QPBytesSent)
		wantSent += int64(v)
	}
	assert.Equal(t, []int64{wantSent}, sent["2"], "one point: the sum over the QPs")

	// The default configuration records the bulk metrics past the builder.
	assert.NotNil(t, newTestScraper(t, f.config(), &now).bulk)
}

// With host.name on (as the push configs have it), every resource carries
// the host: the instances' and the cluster gauges'; host_name overrides
// the kernel's host name.
func TestHostNameOnEveryResource(t *testing.T) {
	kernel, err := os.Hostname()
	require.NoError(t, err)
	for _, tc := range []struct{ setting, want string }{{"", kernel}, {"gpu-17", "gpu-17"}} {
		f := newFixture(t, "basic")
		now := scrapeNow
		s := newTestScraper(t, f.config(func(c *Config) {
			c.ResourceAttributes.HostName.Enabled = true
			c.HostName = tc.setting
		}), &now)
		md := scrapeOK(t, s)
		rms := md.ResourceMetrics()
		require.Equal(t, 4, rms.Len(), "three instances and the cluster gauges")
		for i := range rms.Len() {
			v, ok := rms.At(i).Resource().Attributes().Get("host.name")
			require.True(t, ok, "resource %v", rms.At(i).Resource().Attributes().AsRaw())
			assert.Equal(t, tc.want, v.Str())
		}
	}
	// Off by default: the legacy labels.
	f := newFixture(t, "basic")
	now := scrapeNow
	md := scrapeOK(t, newTestScraper(t, f.config(), &now))
	for i := range md.ResourceMetrics().Len() {
		_, ok := md.ResourceMetrics().At(i).Resource().Attributes().Get("host.name")
		assert.False(t, ok)
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"flag"
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

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
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

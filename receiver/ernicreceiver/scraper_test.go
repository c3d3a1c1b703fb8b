// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"flag"
	"fmt"
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

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/scraper")

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

func TestStartRejectsBadProcDir(t *testing.T) {
	f := newFixture(t, "basic")
	cfg := f.config(func(c *Config) { c.ProcDir = filepath.Join(t.TempDir(), "missing") })
	s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.ErrorContains(t, s.start(context.Background(), nil), "set proc_dir to the host's proc filesystem")
}

func TestScrapeNoManifestYet(t *testing.T) {
	f := newFixture(t, "basic")
	require.NoError(t, os.Remove(filepath.Join(f.runDir, "instances.json")))
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	md, err := s.scrape(context.Background())
	require.NoError(t, err, "an expected state, logged once at Info (TestExpectedStatesNotErrors)")
	assert.Equal(t, 1, md.DataPointCount(), "stats files without a manifest entry are not read: ernic.run_dir.readable only")
	assert.Equal(t, int64(0), intVal(t, md, "ernic.run_dir.readable"))
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
	assert.Equal(t, 1, values, "ernic.run_dir.readable only")
	assert.Equal(t, int64(0), intVal(t, md, "ernic.run_dir.readable"))
	assert.Equal(t, published-1, stale, "every other series of the last scrape ends with a staleness marker")

	// Reported once per interval, not every scrape; the series stay ended.
	now = now.Add(5 * time.Second)
	md, err = s.scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, md.DataPointCount())
	assert.Equal(t, int64(0), intVal(t, md, "ernic.run_dir.readable"))

	require.NoError(t, os.Rename(backup, f.runDir))
	now = now.Add(5 * time.Second)
	md = scrapeOK(t, s)
	assert.Equal(t, int64(3), intVal(t, md, "ernic.instances"))
	assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.run_dir.readable"))
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

// A manifest pid that is not a process id is reported, not taken as "no
// pid" silently.
func TestManifestPidOutOfRange(t *testing.T) {
	for _, pid := range []string{"-1", "4294967297", "0"} {
		f := newFixture(t, "basic")
		now := scrapeNow
		f.write(t, "instances.json", `{"instances": [{"id": 2, "role": "worker", "pid": `+pid+`}]}`, now)
		s := newTestScraper(t, f.config(), &now)
		md, err := s.scrape(context.Background())
		require.Error(t, err, pid)
		assert.Contains(t, err.Error(), `key "pid": `+pid+` is not a process id`)
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
	}
}

// writeManyInstances writes a manifest of n instances owned by this
// process, without stats files, into a new run directory.
func writeManyInstances(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	var b strings.Builder
	b.WriteString(`{"instances":[`)
	for id := 1; id <= n; id++ {
		if id > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"role":"worker","pid":%d,"mac":"02:aa:00:00:00:01","vm":null}`, id, os.Getpid())
	}
	b.WriteString("]}")
	require.NoError(tb, os.WriteFile(filepath.Join(dir, rundir.ManifestFile), []byte(b.String()), 0o644))
	return dir
}

// A manifest far larger than max_instances costs one pass over it: the
// instances over the cap (highest ids) are not looked up, not read and not
// remembered, and ernic.instances.unpublished counts them. The forget step
// was quadratic in the instances remembered (100,000 left the manifest at
// once here: minutes before, milliseconds now).
func TestMaxInstancesCap(t *testing.T) {
	const n = 100_000
	dir := writeManyInstances(t, n)
	cfg := createDefaultConfig().(*Config)
	cfg.RunDir = dir
	cfg.MaxInstances = 10
	now := time.Now()
	s := newTestScraper(t, cfg, &now)
	for id := int64(n + 1); id <= 2*n; id++ {
		s.instances[id] = &instanceState{}
	}
	done := make(chan struct{})
	var md pmetric.Metrics
	var err error
	go func() {
		defer close(done)
		md, err = s.scrape(context.Background())
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a scrape of 100,000 instances capped at 10 did not finish in 20 s")
	}
	require.NoError(t, err)
	assert.Equal(t, int64(n), intVal(t, md, "ernic.instances"), "every listed instance is counted")
	assert.Equal(t, int64(n-10), intVal(t, md, "ernic.instances.unpublished"))
	assert.Len(t, points(md, "ernic.instance.up"), 10)
	for id := 1; id <= 10; id++ {
		assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", strconv.Itoa(id)), "the lowest ids are kept")
	}
	assert.Len(t, s.instances, 10, "only published instances are remembered")
}

// A scrape whose context ends stops between instances and in a retry's
// pause: it returns the context's error, and the instances it did not
// reach do not get staleness markers (they were not seen to end).
func TestScrapeHonoursContext(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	published, _ := counts(scrapeOK(t, s))
	require.NotZero(t, published)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	now = now.Add(5 * time.Second)
	md, err := s.scrape(ctx)
	require.Error(t, err)
	assert.ErrorContains(t, err, "scrape cut after 0 of 3 instances: context canceled")
	_, stale := counts(md)
	assert.Zero(t, stale, "a cut scrape ends no series")

	// The next whole scrape publishes every instance again, with no marker.
	now = now.Add(5 * time.Second)
	md = scrapeOK(t, s)
	values, stale := counts(md)
	assert.Equal(t, published, values)
	assert.Zero(t, stale)

	// A torn file's retry pauses end with the context too.
	f.write(t, "2.stats", "", now)
	s.reader.Backoff = []time.Duration{time.Hour}
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err = s.scrape(ctx)
	assert.Less(t, time.Since(begin), 10*time.Second)
	require.Error(t, err)
	assert.ErrorContains(t, err, "context deadline exceeded")
}

// The forget step is linear without a cap too: 200,000 remembered
// instances, 200,000 others in the manifest (quadratic: 4e10 compares).
func TestForgetLeftLinear(t *testing.T) {
	const n = 200_000
	s := &ernicScraper{instances: make(map[int64]*instanceState, n)}
	insts := make([]rundir.Instance, n)
	published := make([]*rundir.Instance, n)
	for i := range n {
		s.instances[int64(i+1)] = &instanceState{}
		insts[i].ID = int64(n + i + 1)
		published[i] = &insts[i]
	}
	s.instances[int64(n+1)] = &instanceState{} // still listed: kept
	begin := time.Now()
	s.forgetLeft(published)
	assert.Less(t, time.Since(begin), 10*time.Second)
	assert.Len(t, s.instances, 1)
	assert.NotNil(t, s.instances[int64(n+1)])
}

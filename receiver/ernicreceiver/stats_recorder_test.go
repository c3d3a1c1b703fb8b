// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

func TestScrapeFormatVariants(t *testing.T) {
	for _, tc := range []struct {
		file   string
		checks func(t *testing.T, md pmetric.Metrics)
	}{
		{"regs-format.stats", func(t *testing.T, md pmetric.Metrics) {
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
		{"regs-format-no-qps.stats", func(t *testing.T, md pmetric.Metrics) {
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

// A QP limit keeps the QPs of lowest handle, also for handles above 2^31
// (the comparison once overflowed int on 32-bit builds: `make test` runs
// this package for GOARCH=386 too).
func TestPublishedQPsLowestHandles(t *testing.T) {
	qps := []rundir.QP{{Handle: 3_000_000_000}, {Handle: 1}, {Handle: 2_147_483_649}, {Handle: 7}}
	var got []uint32
	for _, q := range publishedQPs(qps, 2) {
		got = append(got, q.Handle)
	}
	assert.Equal(t, []uint32{1, 7}, got)
	got = got[:0]
	for _, q := range publishedQPs(qps, 3) {
		got = append(got, q.Handle)
	}
	assert.Equal(t, []uint32{1, 7, 2_147_483_649}, got)
}

// A stats file modified in the future is published as 0 s old and
// reported, not as a negative age that keeps ErnicStatsStuck quiet.
func TestStatsAgeFutureMtime(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	f.touch(t, "2.stats", now.Add(time.Hour))
	s := newTestScraper(t, f.config(), &now)
	md, err := s.scrape(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in the future")
	found := false
	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		if id, _ := res.Get("ernic.id"); m.Name() == "ernic.stats.age" && id.Str() == "2" {
			found = true
			assert.Zero(t, dp.DoubleValue())
		}
	})
	assert.True(t, found, "instance 2's stats age is published")
}

// A file written during the scrape, after its start, is milliseconds
// "ahead" of the scrape time: 0 s old and no fault (the soak saw "0 s in
// the future" logged at Error for such files).
func TestStatsAgeWrittenDuringScrape(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	f.touch(t, "2.stats", now.Add(300*time.Millisecond))
	s := newTestScraper(t, f.config(), &now)
	md := scrapeOK(t, s)
	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		if id, _ := res.Get("ernic.id"); m.Name() == "ernic.stats.age" && id.Str() == "2" {
			assert.Zero(t, dp.DoubleValue())
		}
	})
}

// An opcode line named "other" and the block's `(other opcodes)` would be
// one series (opcode="other"): the derived value keeps the name, the line
// is left out and reported; nothing is summed.
func TestOpcodeNamedOther(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	raw, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	text := strings.Replace(string(raw), "      SEND                  : 512\n", "      SEND                  : 512\n      other                 : 40\n", 1)
	require.NotEqual(t, string(raw), text)
	f.write(t, "2.stats", text, now.Add(-500*time.Millisecond))
	for _, bulk := range []bool{true, false} {
		cfg := f.config(func(c *Config) { c.Metrics.ErnicQpWqesByOpcode.Enabled = true })
		if !bulk {
			// An attribute turned off sends the points through the builder.
			cfg.Metrics.ErnicLifCounter.EnabledAttributes = nil
		}
		s := newTestScraper(t, cfg, &now)
		require.Equal(t, bulk, s.bulk != nil)
		md, err := s.scrape(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), `opcode line named "other"`)
		var others []int64
		forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
			if id, _ := res.Get("ernic.id"); m.Name() != "ernic.qp.wqes.by_opcode" || id.Str() != "2" {
				return
			}
			if op, _ := dp.Attributes().Get("opcode"); op.Str() == "other" {
				if qp, _ := dp.Attributes().Get("qp"); qp.Str() == "9" {
					others = append(others, dp.IntValue())
				}
			}
		})
		assert.Equal(t, []int64{3}, others, "QP 9: (other opcodes) only, not 40+3")
	}
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
	assert.Equal(t, tsOf(prev.Add(time.Millisecond)), commandsStart(t, md, "2"))
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

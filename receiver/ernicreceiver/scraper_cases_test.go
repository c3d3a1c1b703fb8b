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

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

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

// A live server whose stats file is older than its process ends its series
// with a report, not silently; right after a start it is normal and quiet.
func TestStatsOlderThanProcess(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	f.touch(t, "2.stats", now.Add(-24*time.Hour))
	s := newTestScraper(t, f.config(), &now)
	md, err := s.scrape(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "before its server process (pid 4117) started")
	assert.Empty(t, points(md, "ernic.commands", "ernic.id", "2"))

	// A process that started 2 s ago has not written yet: no report.
	f = newFixture(t, "basic")
	f.setProc(t, 4117, "S", 69800) // boot+698 s
	f.touch(t, "2.stats", now.Add(-3*time.Second))
	s = newTestScraper(t, f.config(), &now)
	md, err = s.scrape(context.Background())
	if err != nil {
		assert.NotContains(t, err.Error(), "before its server process")
	}
	assert.Empty(t, points(md, "ernic.commands", "ernic.id", "2"))
}

// When counters go down under the same pid, the new start time is after
// the last point published with the old one: the unchanged file was not
// read again at the second scrape, but its values were published then, so
// the new stream starts just after that scrape, not at the last read.
func TestResetStartAfterLastPublished(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	md := scrapeOK(t, s)
	old := commandsStart(t, md, "2")

	now = now.Add(5 * time.Second) // the file is unchanged: not read again
	md = scrapeOK(t, s)
	require.Equal(t, old, commandsStart(t, md, "2"))

	raw, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	f.write(t, "2.stats", replaceLine(t, string(raw), "interrupts              : 10440", "interrupts              : 10"), now.Add(3*time.Second))
	now = now.Add(5 * time.Second)
	md = scrapeOK(t, s)
	assert.Equal(t, int64(10), intVal(t, md, "ernic.interrupts", "ernic.id", "2"))
	assert.Equal(t, tsOf(now.Add(-5*time.Second).Add(time.Millisecond)), commandsStart(t, md, "2"), "the new start is just after the last point of the old stream")
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// scrapeStarted scrapes and checks that every counter point starts before
// its timestamp and that no gauge point has a start: a backend's start-time
// zero sample goes there, onto a point's value or into a gauge.
func scrapeStarted(t *testing.T, s *ernicScraper) pmetric.Metrics {
	t.Helper()
	md := scrapeOK(t, s)
	forEachPoint(md, func(m pmetric.Metric, dp pmetric.NumberDataPoint) {
		switch {
		case m.Type() == pmetric.MetricTypeSum && dp.StartTimestamp() >= dp.Timestamp():
			t.Errorf("%s %v: start %v is not before the point", m.Name(), dp.Attributes().AsRaw(), dp.StartTimestamp())
		case m.Type() == pmetric.MetricTypeGauge && dp.StartTimestamp() != 0:
			t.Errorf("gauge %s %v: start %v", m.Name(), dp.Attributes().AsRaw(), dp.StartTimestamp())
		}
	})
	return md
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
		md := scrapeStarted(t, s)
		assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, md, "2"))
	})

	t.Run("unknown process start: the boot time, kept while the pid stays", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(6000), scrapeNow) // no /proc entry
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		md := scrapeStarted(t, s)
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
		assert.Equal(t, tsOf(time.Unix(bootTime, 0)), commandsStart(t, md, "2"))
		now = now.Add(5 * time.Second)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "commands                : 211", "commands                : 300"), now)
		md = scrapeStarted(t, s)
		assert.Equal(t, tsOf(time.Unix(bootTime, 0)), commandsStart(t, md, "2"))
		assert.Equal(t, int64(300), intVal(t, md, "ernic.commands"))
	})

	t.Run("unknown process start: a restarted collector gives the same start", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(6000), scrapeNow) // a crashed server: pid gone, file kept
		now := scrapeNow
		first := commandsStart(t, scrapeStarted(t, newTestScraper(t, f.config(), &now)), "2")
		now = now.Add(5 * time.Second)
		again := newTestScraper(t, f.config(), &now) // killed and started again: no state
		assert.Equal(t, first, commandsStart(t, scrapeStarted(t, again), "2"))
	})

	t.Run("unknown start of a new pid: just after the old stream's last point", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(4117), scrapeNow)
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		scrapeStarted(t, s)

		last := now
		now = now.Add(5 * time.Second)
		f.write(t, "instances.json", manifest(6000), now) // a new pid /proc does not show
		f.write(t, "2.stats", replaceLine(t, string(stats2), "commands                : 211", "commands                : 5"), now)
		md := scrapeStarted(t, s)
		assert.Equal(t, tsOf(last.Add(time.Millisecond)), commandsStart(t, md, "2"))
		assert.Equal(t, int64(5), intVal(t, md, "ernic.commands"))
	})

	t.Run("new pid", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(4117), scrapeNow)
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		first := commandsStart(t, scrapeStarted(t, s), "2")

		// ernicctl hot-reload: a new server process, counters from zero.
		now = now.Add(10 * time.Second)
		f.setProc(t, 4300, "S", 70500) // started at boot+705 s
		f.write(t, "instances.json", manifest(4300), now)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "commands                : 211", "commands                : 5"), now)
		md := scrapeStarted(t, s)
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
		md := scrapeStarted(t, s)
		assert.Empty(t, points(md, "ernic.commands"))
		assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))

		now = now.Add(time.Second)
		f.touch(t, "2.stats", now) // the new process wrote
		md = scrapeStarted(t, s)
		assert.Equal(t, int64(211), intVal(t, md, "ernic.commands"))
		assert.Equal(t, tsOf(time.Unix(bootTime+690, 0)), commandsStart(t, md, "2"))
	})

	t.Run("pid reuse: same pid, other start time", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(4117), scrapeNow)
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, scrapeStarted(t, s), "2"))

		now = now.Add(10 * time.Second)
		f.setProc(t, 4117, "S", 70800)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "commands                : 211", "commands                : 1"), now)
		md := scrapeStarted(t, s)
		assert.Equal(t, tsOf(time.Unix(bootTime+708, 0)), commandsStart(t, md, "2"))
	})

	t.Run("a counter going down starts a new start time", func(t *testing.T) {
		f := newFixture(t, "basic")
		f.write(t, "instances.json", manifest(4117), scrapeNow)
		now := scrapeNow
		s := newTestScraper(t, f.config(), &now)
		scrapeStarted(t, s)

		prev := now
		now = now.Add(5 * time.Second)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "interrupts              : 10440", "interrupts              : 10"), now)
		md := scrapeStarted(t, s)
		assert.Equal(t, tsOf(prev.Add(time.Millisecond)), commandsStart(t, md, "2"), "the new start is just after the last read of the old values")
		assert.Equal(t, int64(10), intVal(t, md, "ernic.interrupts"))

		// Steady again: the start stays.
		now = now.Add(5 * time.Second)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "interrupts              : 10440", "interrupts              : 20"), now)
		md = scrapeStarted(t, s)
		assert.Equal(t, tsOf(prev.Add(time.Millisecond)), commandsStart(t, md, "2"))
	})
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

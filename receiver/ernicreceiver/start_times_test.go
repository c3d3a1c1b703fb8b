// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		assert.Equal(t, tsOf(prev.Add(time.Millisecond)), commandsStart(t, md, "2"), "the new start is just after the last read of the old values")
		assert.Equal(t, int64(10), intVal(t, md, "ernic.interrupts"))

		// Steady again: the start stays.
		now = now.Add(5 * time.Second)
		f.write(t, "2.stats", replaceLine(t, string(stats2), "interrupts              : 10440", "interrupts              : 20"), now)
		md = scrapeOK(t, s)
		assert.Equal(t, tsOf(prev.Add(time.Millisecond)), commandsStart(t, md, "2"))
	})
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

	// The new process's startup file, in the same second: published. (A
	// startup file without QPs, and the LIF block the server writes on
	// every write, here with the old file's LIF lines.)
	now = now.Add(time.Second)
	startup, err := os.ReadFile(filepath.Join("testdata", "rundir", "basic", "1.stats"))
	require.NoError(t, err)
	lif := string(stats2[strings.Index(string(stats2), "LIF Statistics:"):])
	f.write(t, "2.stats", string(startup)+"\n"+lif, time.Unix(bootTime+704, 600_000_000))
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
	assert.Equal(t, tsOf(prev.Add(time.Millisecond)), commandsStart(t, md, "2"))
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

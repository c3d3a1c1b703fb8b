// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// parsedStats renders st in the server's format and parses it.
func parsedStats(t *testing.T, st *fileStats) *rundir.Stats {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, formatStats(bufio.NewWriter(&b), st))
	s, err := rundir.ParseStats(b.Bytes())
	require.NoError(t, err)
	return s
}

// wentDown compares QP blocks and LIF counters by index while they keep
// their order and by handle or name once they move; new entries compare
// with nothing.
func TestWentDown(t *testing.T) {
	base := func() *fileStats {
		st := &fileStats{Connection: "connected", WriteCount: 10}
		st.Device = fileDevice{Commands: 5, Interrupts: 9, BytesSent: 100}
		for h := uint32(1); h <= 4; h++ {
			st.QPs = append(st.QPs, fileQP{Handle: h, WQEsProcessed: 100 * uint64(h), BytesSent: 1000,
				Opcodes: []fileCounter{{Name: "SEND", Value: 50 * uint64(h)}}})
		}
		st.LIF = []fileCounter{{Name: "rx_ucast_bytes", Value: 500}, {Name: "tx_ucast_bytes", Value: 700}}
		return st
	}
	prev := parsedStats(t, base())
	for _, tc := range []struct {
		name   string
		change func(st *fileStats)
		want   bool
	}{
		{"same", func(*fileStats) {}, false},
		{"all up, one QP added in the middle", func(st *fileStats) {
			st.WriteCount++
			st.QPs = append(st.QPs[:2], append([]fileQP{{Handle: 9}}, st.QPs[2:]...)...)
		}, false},
		{"QP rotated, each lower than the QP now at its old index", func(st *fileStats) {
			st.QPs = append(st.QPs[1:], st.QPs[0])
		}, false},
		{"QP moved and lower", func(st *fileStats) {
			st.QPs[3].WQEsProcessed = 399
			st.QPs = append(st.QPs[3:], st.QPs[:3]...)
		}, true},
		{"opcode lower", func(st *fileStats) { st.QPs[1].Opcodes[0].Value-- }, true},
		{"device counter lower", func(st *fileStats) { st.Device.Interrupts = 8 }, true},
		{"write count lower", func(st *fileStats) { st.WriteCount = 9 }, true},
		{"LIF lower", func(st *fileStats) { st.LIF[1].Value = 699 }, true},
		{"LIF reordered and lower", func(st *fileStats) {
			st.LIF[0].Value = 499
			st.LIF[0], st.LIF[1] = st.LIF[1], st.LIF[0]
		}, true},
		{"LIF reordered, all up", func(st *fileStats) { st.LIF[0], st.LIF[1] = st.LIF[1], st.LIF[0] }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := base()
			tc.change(st)
			assert.Equal(t, tc.want, wentDown(prev, parsedStats(t, st)))
		})
	}
}

// The scraper parses each read into the snapshot that the one before
// replaced: a torn read leaves the current snapshot intact, and an accepted
// one hands the old snapshot's memory to the next read.
func TestSpareSnapshot(t *testing.T) {
	st := &instanceState{}
	first := parsedStats(t, &fileStats{WriteCount: 1, Device: fileDevice{Commands: 1}})
	st.accept(first, fakeInfo{}, testNow)
	assert.Nil(t, st.spare)
	second := parsedStats(t, &fileStats{WriteCount: 2, Device: fileDevice{Commands: 2}})
	st.accept(second, fakeInfo{}, testNow)
	assert.Same(t, second, st.stats)
	assert.Same(t, first, st.spare, "the replaced snapshot is the next read's memory")
	st.accept(second, fakeInfo{}, testNow)
	assert.Same(t, first, st.spare, "accepting the current snapshot again keeps the spare")
}

var testNow = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)

// fakeInfo is the fstat of a file of no interest.
type fakeInfo struct{}

func (fakeInfo) Name() string       { return "1.stats" }
func (fakeInfo) Size() int64        { return 0 }
func (fakeInfo) Mode() fs.FileMode  { return 0o644 }
func (fakeInfo) ModTime() time.Time { return testNow.Add(-time.Second) }
func (fakeInfo) IsDir() bool        { return false }
func (fakeInfo) Sys() any           { return nil }

// qpHandles formats the handles once and again only when they change.
func TestQPHandles(t *testing.T) {
	st := &instanceState{}
	qps := []*rundir.QP{{Handle: 7}, {Handle: 1024}}
	first := st.qpHandles(qps)
	assert.Equal(t, []string{"7", "1024"}, first)
	again := st.qpHandles([]*rundir.QP{{Handle: 7}, {Handle: 1024}})
	assert.Same(t, &first[0], &again[0], "the same strings while the handles stay")
	assert.Equal(t, []string{"7", "1025"}, st.qpHandles([]*rundir.QP{{Handle: 7}, {Handle: 1025}}))
	assert.Equal(t, []string{"7"}, st.qpHandles([]*rundir.QP{{Handle: 7}}))
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

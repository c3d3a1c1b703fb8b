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
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

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
	assert.Equal(t, 1, md.DataPointCount(), "stats files without a manifest entry are not read: ernic.run_dir.readable only")
	assert.Equal(t, int64(0), intVal(t, md, "ernic.run_dir.readable"))
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

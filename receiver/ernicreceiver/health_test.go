// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// statusHost is a host that keeps the status events reported to it, as the
// collector's service does for the healthcheckv2 extension.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

var _ componentstatus.Reporter = (*statusHost)(nil)

func newStatusHost() *statusHost { return &statusHost{Host: componenttest.NewNopHost()} }

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
}

// statuses returns the statuses reported so far, in order.
func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]componentstatus.Status, len(h.events))
	for i, ev := range h.events {
		out[i] = ev.Status()
	}
	return out
}

func (h *statusHost) last() *componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.events[len(h.events)-1]
}

// statusScraper is newTestScraper started with host, unhealthy_after set,
// and its log lines kept.
func statusScraper(t *testing.T, cfg *Config, after time.Duration, now *time.Time, host component.Host) (*ernicScraper, *observer.ObservedLogs) {
	t.Helper()
	cfg.UnhealthyAfter = after
	require.NoError(t, cfg.Validate())
	core, logs := observer.New(zap.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	s := newScraper(cfg, set)
	s.now = func() time.Time { return *now }
	require.NoError(t, s.start(context.Background(), host))
	return s, logs
}

// scrapeAt advances the clock by d and scrapes; it returns
// ernic.run_dir.readable.
func scrapeAt(t *testing.T, s *ernicScraper, now *time.Time, d time.Duration) int64 {
	t.Helper()
	*now = now.Add(d)
	md, _ := s.scrape(context.Background())
	return intVal(t, md, "ernic.run_dir.readable")
}

// A run directory absent at start (rocm-ernic not started yet) is no
// error until it has lasted unhealthy_after; then one RecoverableError,
// not one per scrape, and StatusOK once when it is created.
func TestStatusRunDirAbsentThenCreated(t *testing.T) {
	f := newFixture(t, "basic")
	require.NoError(t, os.Rename(f.runDir, f.runDir+".later"))
	now := scrapeNow
	host := newStatusHost()
	s, logs := statusScraper(t, f.config(), 10*time.Second, &now, host)

	assert.Equal(t, int64(0), scrapeAt(t, s, &now, 0))
	assert.Equal(t, int64(0), scrapeAt(t, s, &now, 5*time.Second))
	assert.Empty(t, host.statuses(), "absent for 5 s, under unhealthy_after")
	assert.Equal(t, int64(0), scrapeAt(t, s, &now, 5*time.Second))
	require.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.statuses())
	assert.ErrorContains(t, host.last().Err(), f.runDir+": Run directory absent")
	for range 3 {
		scrapeAt(t, s, &now, 5*time.Second)
	}
	assert.Len(t, host.statuses(), 1, "reported once, not every scrape")

	require.NoError(t, os.Rename(f.runDir+".later", f.runDir))
	assert.Equal(t, int64(1), scrapeAt(t, s, &now, 5*time.Second))
	scrapeAt(t, s, &now, 5*time.Second)
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.statuses())

	// Said once at start, and not again by the first scrape.
	assert.Equal(t, 1, logs.FilterMessageSnippet("Run directory absent").Len(), "%v", logs.All())
	assert.Equal(t, f.runDir, logs.FilterMessageSnippet("Run directory absent").All()[0].ContextMap()["run_dir"])
}

// Absent for less than unhealthy_after: nothing reported at all.
func TestStatusShortAbsenceNotReported(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	host := newStatusHost()
	s, logs := statusScraper(t, f.config(), 10*time.Second, &now, host)
	assert.Equal(t, int64(1), scrapeAt(t, s, &now, 0))
	require.NoError(t, os.Rename(f.runDir, f.runDir+".bak"))
	assert.Equal(t, int64(0), scrapeAt(t, s, &now, 5*time.Second))
	assert.Equal(t, int64(0), scrapeAt(t, s, &now, 4*time.Second))
	require.NoError(t, os.Rename(f.runDir+".bak", f.runDir))
	assert.Equal(t, int64(1), scrapeAt(t, s, &now, 5*time.Second))
	// A new absence starts its own count.
	require.NoError(t, os.Rename(f.runDir, f.runDir+".bak"))
	scrapeAt(t, s, &now, 5*time.Second)
	scrapeAt(t, s, &now, 5*time.Second)
	assert.Empty(t, host.statuses())
	assert.Equal(t, 1, logs.FilterMessageSnippet("Reading the rocm-ernic run directory").Len())
}

// run_dir naming a file (a typo): said at start, and reported at the first
// scrape with unhealthy_after 0; a manifest-less (empty) directory after
// it is another cause, reported again; a good one ends it.
func TestStatusRunDirNotADirectory(t *testing.T) {
	f := newFixture(t, "basic")
	file := filepath.Join(t.TempDir(), "rocm-ernic")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	now := scrapeNow
	host := newStatusHost()
	cfg := f.config(func(c *Config) { c.RunDir = file })
	s, logs := statusScraper(t, cfg, 0, &now, host)
	assert.Equal(t, 1, logs.FilterMessageSnippet("not a directory").Len(), "%v", logs.All())
	assert.Equal(t, zap.WarnLevel, logs.FilterMessageSnippet("not a directory").All()[0].Level)

	assert.Equal(t, int64(0), scrapeAt(t, s, &now, 0))
	require.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.statuses())
	assert.ErrorContains(t, host.last().Err(), "run directory "+file)
	assert.ErrorContains(t, host.last().Err(), "not a directory")
	scrapeAt(t, s, &now, 5*time.Second)
	assert.Len(t, host.statuses(), 1)

	require.NoError(t, os.Remove(file))
	require.NoError(t, os.Mkdir(file, 0o755))
	assert.Equal(t, int64(0), scrapeAt(t, s, &now, 5*time.Second))
	require.Len(t, host.statuses(), 2, "another cause")
	assert.ErrorContains(t, host.last().Err(), "Manifest not written yet")

	require.NoError(t, os.CopyFS(file+".good", os.DirFS(f.runDir)))
	require.NoError(t, os.RemoveAll(file))
	require.NoError(t, os.Rename(file+".good", file))
	assert.Equal(t, int64(1), scrapeAt(t, s, &now, 5*time.Second))
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.statuses())
}

// Every instance's stats file unreadable is nothing to publish too; one
// readable is enough.
func TestStatusEveryStatsFileUnreadable(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	host := newStatusHost()
	s, _ := statusScraper(t, f.config(), 0, &now, host)
	scrapeOK(t, s)
	// A directory in place of a stats file fails to read (the fixture has
	// no 3.stats: a server that has not written yet is no failure).
	unreadable := func(name string) {
		require.NoError(t, os.RemoveAll(filepath.Join(f.runDir, name)))
		require.NoError(t, os.Mkdir(filepath.Join(f.runDir, name), 0o755))
	}
	unreadable("2.stats")
	unreadable("3.stats")
	assert.Equal(t, int64(1), scrapeAt(t, s, &now, 5*time.Second))
	assert.Empty(t, host.statuses(), "one instance still read")

	unreadable("1.stats")
	assert.Equal(t, int64(1), scrapeAt(t, s, &now, 5*time.Second), "the run directory itself is read")
	require.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.statuses())
	assert.ErrorContains(t, host.last().Err(), "none of the 3 instances' stats files could be read")
	scrapeAt(t, s, &now, 5*time.Second)
	assert.Len(t, host.statuses(), 1)

	require.NoError(t, os.Remove(filepath.Join(f.runDir, "1.stats")))
	f.write(t, "1.stats", string(mustRead(t, filepath.Join("testdata", "rundir", "basic", "1.stats"))), now)
	scrapeAt(t, s, &now, 5*time.Second)
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.statuses())
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// Through the receiver: the host given to Start gets the events.
func TestReceiverReportsStatusToHost(t *testing.T) {
	f := newFixture(t, "basic")
	cfg := f.config(func(c *Config) {
		c.RunDir = filepath.Join(t.TempDir(), "absent")
		c.CollectionInterval = MinCollectionInterval
		c.UnhealthyAfter = 0
	})
	r, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, new(consumertest.MetricsSink))
	require.NoError(t, err)
	host := newStatusHost()
	require.NoError(t, r.Start(context.Background(), host))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()
	require.Eventually(t, func() bool { return len(host.statuses()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, componentstatus.StatusRecoverableError, host.last().Status())

	require.NoError(t, os.CopyFS(cfg.RunDir, os.DirFS(f.runDir)))
	require.Eventually(t, func() bool { return len(host.statuses()) == 2 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, componentstatus.StatusOK, host.last().Status())
}

// A run directory that is absent (rocm-ernic stopped) or a manifest not
// written yet are expected states: logged once at Info, not returned as
// scrape errors (the receiver logs those at Error).
func TestExpectedStatesNotErrors(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s, logs := observedScraper(t, f.config(), &now, zap.NewAtomicLevelAt(zap.InfoLevel))
	scrapeOK(t, s)

	require.NoError(t, os.Rename(f.runDir, f.runDir+".bak"))
	for range 3 {
		now = now.Add(5 * time.Second)
		_, err := s.scrape(context.Background())
		require.NoError(t, err)
	}
	now = now.Add(faultInterval)
	_, err := s.scrape(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, logs.FilterMessageSnippet("Run directory").Len(), "%v", logs.All())
	assert.Equal(t, zap.InfoLevel, logs.FilterMessageSnippet("Run directory").All()[0].Level)

	require.NoError(t, os.Rename(f.runDir+".bak", f.runDir))
	require.NoError(t, os.Remove(filepath.Join(f.runDir, "instances.json")))
	for range 3 {
		now = now.Add(5 * time.Second)
		_, err := s.scrape(context.Background())
		require.NoError(t, err)
	}
	assert.Equal(t, 1, logs.FilterMessageSnippet("Manifest").Len(), "%v", logs.All())

	// A run directory that is there but cannot be opened is a fault.
	require.NoError(t, os.RemoveAll(f.runDir))
	require.NoError(t, os.WriteFile(f.runDir, nil, 0o644))
	now = now.Add(5 * time.Second)
	_, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "run directory "+f.runDir)
	assert.Equal(t, 1, logs.FilterMessageSnippet("Run directory").Len(), "no Info line for a fault")
}

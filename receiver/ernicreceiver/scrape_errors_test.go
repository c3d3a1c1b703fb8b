// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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

// observedScraper is newTestScraper with its log lines at level and above
// kept.
func observedScraper(t *testing.T, cfg *Config, now *time.Time, level zap.AtomicLevel) (*ernicScraper, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(level)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	s := newScraper(cfg, set)
	s.now = func() time.Time { return *now }
	require.NoError(t, s.start(context.Background(), nil))
	return s, logs
}

// failedOf returns the failed count of a partial scrape error, -1 when err
// is not one.
func failedOf(err error) int {
	var pe scrapererror.PartialScrapeError
	if errors.As(err, &pe) {
		return pe.Failed
	}
	return -1
}

// A fault of the same kind but another content is a new fault: reported
// at once, not 10 minutes later.
func TestFaultsDistinctReported(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	good := `{"id": 2, "role": "worker", "pid": 4117}`
	f.write(t, "instances.json", `{"instances": [{"id": "x"}, `+good+`]}`, now)
	_, err := s.scrape(context.Background())
	require.ErrorContains(t, err, "1 unusable entries")

	now = now.Add(5 * time.Second)
	f.write(t, "instances.json", `{"instances": [{"id": "x"}, {"id": "y"}, {"id": 0}, `+good+`]}`, now)
	_, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "3 unusable entries")

	// The same again: suppressed from the log, still counted.
	now = now.Add(5 * time.Second)
	_, err = s.scrape(context.Background())
	assert.Equal(t, 3, failedOf(err), "%v", err)
	assert.NotContains(t, err.Error(), "unusable entries")

	// Another unusable manifest after an unusable one is reported too.
	s.reader.Backoff = nil
	now = now.Add(5 * time.Second)
	f.write(t, "instances.json", `{"instances": {}}`, now)
	_, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "cannot unmarshal object")
	now = now.Add(5 * time.Second)
	f.write(t, "instances.json", `{"instances": 5}`, now)
	_, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "cannot unmarshal number")
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

// The receiver logs a scrape whose faults were all reported before at
// Debug only (onlyReported), and any other error at Error.
func TestOnlyReported(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	raw, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	f.write(t, "2.stats", replaceLine(t, string(raw), "rx_ucast_bytes : 498230", "rx_ucast_bytes : 4x"), now)
	_, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "unusable lines")
	assert.False(t, onlyReported(err))
	assert.Equal(t, 1, failedOf(err))
	now = now.Add(5 * time.Second)
	_, err = s.scrape(context.Background())
	assert.True(t, onlyReported(err), "%v", err)
	assert.Equal(t, 1, failedOf(err), "still counted")
	assert.False(t, onlyReported(errors.New("other")))
	assert.True(t, onlyReported(errFaultsReported))
}

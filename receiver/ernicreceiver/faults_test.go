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
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

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

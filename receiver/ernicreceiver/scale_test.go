// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

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

// timeScrapes returns how long the first and the second scrape of a run
// directory of n instances take.
func timeScrapes(t *testing.T, n int, opts ...func(*Config)) (first, second time.Duration) {
	dir := writeManyInstances(t, n)
	cfg := createDefaultConfig().(*Config)
	cfg.RunDir = dir
	for _, o := range opts {
		o(cfg)
	}
	now := time.Now()
	s := newTestScraper(t, cfg, &now)
	for i := range 2 {
		begin := time.Now()
		require.NoError(t, s.scrapeEach(context.Background(), func(pmetric.Metrics) {}))
		if i == 0 {
			first = time.Since(begin)
		} else {
			second = time.Since(begin)
		}
		now = now.Add(5 * time.Second)
	}
	return first, second
}

// TestMeasureScale logs the time of two scrapes of 5k to 40k instances
// (ERNIC_MEASURE=1 go test -run TestMeasureScale -v).
func TestMeasureScale(t *testing.T) {
	if os.Getenv("ERNIC_MEASURE") == "" {
		t.Skip("ERNIC_MEASURE unset")
	}
	for _, n := range []int{5000, 10000, 20000, 40000} {
		first, second := timeScrapes(t, n, func(c *Config) { c.MaxInstances = 0 })
		t.Logf("%d instances, no cap: first %v, second %v", n, first, second)
		first, second = timeScrapes(t, n)
		t.Logf("%d instances, default cap: first %v, second %v", n, first, second)
	}
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

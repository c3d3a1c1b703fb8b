// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/storagetest"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// queueItems is the number of items a persistent queue holds in s (its
// keys are the items' indexes and one metadata key).
func queueItems(s *storagetest.MemStorage) int {
	n := 0
	for _, k := range s.Keys() {
		if _, err := strconv.Atoi(k); err == nil {
			n++
		}
	}
	return n
}

// downEndpoint is an endpoint that answers 503 until up is set, then 200.
func downEndpoint(t *testing.T) (*endpoint, *atomic.Bool) {
	up := &atomic.Bool{}
	return newEndpoint(t, func(int) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	}), up
}

// produce has four producers call ConsumeMetrics at once, each with 25
// batches of 1 to 3 series, labelled batch=<producer*1000+i>.
func produce(t *testing.T, e *remoteWrite) {
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 25 {
				require.NoError(t, e.ConsumeMetrics(context.Background(), batch(p*1000+i, 1+i%3)))
			}
		})
	}
	wg.Wait()
}

// startOn starts an exporter of cfg with a persistent queue on s.
func startOn(t *testing.T, s *storagetest.MemStorage, cfg *Config) *remoteWrite {
	t.Helper()
	sid := component.MustNewID("memstorage")
	cfg.QueueConfig.Get().StorageID = &sid
	e, err := newExporter(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), s.Host(sid)))
	return e
}

// Five batches within merge_window are one item of the persistent queue
// and one request (five of each without it), their series in order.
func TestMergeWindowStoresOneQueueItem(t *testing.T) {
	for _, tc := range []struct {
		window time.Duration
		items  int
	}{{0, 5}, {50 * time.Millisecond, 1}} {
		t.Run(tc.window.String(), func(t *testing.T) {
			ep, up := downEndpoint(t)
			s := storagetest.NewMemStorage()
			cfg := testConfig(ep.srv.URL)
			cfg.MergeWindow = tc.window
			e := startOn(t, s, cfg)
			t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
			for i := range 5 {
				require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
			}
			waitFor(t, "the batches in the queue", func() bool { return e.Queued() > 0 && queueItems(s) > 0 })
			time.Sleep(3 * tc.window)
			assert.Equal(t, tc.items, queueItems(s), "items in the queue while the endpoint is down")
			up.Store(true)
			waitFor(t, "5 batches", func() bool { return len(ep.batches()) == 5 })
			assert.Equal(t, []string{"0", "1", "2", "3", "4"}, ep.batches())
			ep.mu.Lock()
			assert.Len(t, ep.got, tc.items, "requests accepted")
			ep.mu.Unlock()
			waitFor(t, "the queue to drain", func() bool { return queueItems(s) == 0 })
		})
	}
}

// What merge_window holds when the collector stops is put in the queue
// first, and the next process sends it, in order, before newer batches.
func TestMergeWindowFlushedAtShutdown(t *testing.T) {
	ep, up := downEndpoint(t)
	s := storagetest.NewMemStorage()
	cfg := testConfig(ep.srv.URL)
	cfg.MergeWindow = time.Hour
	e := startOn(t, s, cfg)
	for i := range 3 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 2)))
	}
	assert.Equal(t, 0, queueItems(s), "within the window nothing is stored yet")
	require.NoError(t, e.Shutdown(context.Background()))
	assert.Equal(t, 1, queueItems(s), "stored as one item at shutdown")

	up.Store(true)
	e = startOn(t, s, testConfig(ep.srv.URL))
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(3, 2)))
	waitFor(t, "8 series", func() bool { return len(ep.batches()) == 8 })
	assert.Equal(t, []string{"0", "0", "1", "1", "2", "2", "3", "3"}, ep.batches())
}

// A merged item is put in the queue once it reaches mergeMaxBytes of
// compressed requests, or half of queue_size.
func TestMergeBounds(t *testing.T) {
	st := func(bytes, raw int, samples ...int) translator.Size {
		done := 0
		for _, n := range samples {
			done += n
		}
		return translator.Size{Compressed: bytes, Bytes: bytes + raw, Samples: done}
	}
	for _, tc := range []struct {
		name     string
		sizer    exporterhelper.RequestSizerType
		capacity int64
		pending  translator.Size
		want     bool
	}{
		{"room", exporterhelper.RequestSizerTypeBytes, 1 << 30, st(1000, 500, 10, 10), false},
		{"under mergeMaxBytes", exporterhelper.RequestSizerTypeBytes, 1 << 30, st(mergeMaxBytes-1, 3000, 10), false},
		{"at mergeMaxBytes", exporterhelper.RequestSizerTypeBytes, 1 << 30, st(mergeMaxBytes, 0, 0, 10), true},
		{"under half of queue_size in bytes", exporterhelper.RequestSizerTypeBytes, 1000, st(300, 199, 5, 5), false},
		{"half of queue_size in bytes", exporterhelper.RequestSizerTypeBytes, 1000, st(300, 200, 5, 5), true},
		{"under half of queue_size in items", exporterhelper.RequestSizerTypeItems, 15, st(10, 10, 3, 3), false},
		{"half of queue_size in items", exporterhelper.RequestSizerTypeItems, 15, st(10, 10, 4, 3), true},
		{"requests", exporterhelper.RequestSizerTypeRequests, 2, st(1000, 1000, 1000, 1000), false},
		{"no queue", exporterhelper.RequestSizerTypeBytes, 0, st(1000, 1000, 10, 10), false},
	} {
		b := &builder{bound: func() (int64, int64) { return pushqueue.ItemBound(tc.sizer, tc.capacity) }}
		assert.Equal(t, tc.want, b.full(tc.pending), tc.name)
	}
}

// Batches merged within merge_window share requests: 20 batches of 40
// series go out as requests of at most max_batch_size_bytes, far fewer
// than 20, every series once and in order. A merge that reaches half of
// queue_size is put in the queue without waiting for the window.
func TestMergeWindowJoinsBatchesIntoRequests(t *testing.T) {
	ep := newEndpoint(t, func(int) int { return http.StatusOK })
	cfg := testConfig(ep.srv.URL)
	cfg.MergeWindow = time.Hour
	cfg.MaxBatchSizeBytes = 4000
	cfg.QueueConfig.Get().Sizer = exporterhelper.RequestSizerTypeItems
	cfg.QueueConfig.Get().QueueSize = 400 // an item every 200 series
	e, _ := start(t, cfg)
	var want []string
	for i := range 20 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 40)))
		for range 40 {
			want = append(want, strconv.Itoa(i))
		}
	}
	waitFor(t, "800 series", func() bool { return len(ep.batches()) == 800 })
	assert.Equal(t, want, ep.batches())
	ep.mu.Lock()
	defer ep.mu.Unlock()
	raw := 0
	for _, s := range ep.sizes {
		assert.LessOrEqual(t, s, 4000)
		raw += s
	}
	assert.Less(t, len(ep.sizes), 20, "requests for 20 batches")
	assert.GreaterOrEqual(t, len(ep.sizes), raw/4000+1)
}

// Concurrent producers with merge_window: each producer's batches arrive in
// the order it gave them (merged items enter the queue in order).
func TestMergeWindowKeepsEachProducersOrder(t *testing.T) {
	ep := newEndpoint(t, func(int) int { return http.StatusOK })
	cfg := testConfig(ep.srv.URL)
	cfg.MergeWindow = 2 * time.Millisecond
	cfg.QueueConfig.Get().Sizer = exporterhelper.RequestSizerTypeItems
	cfg.QueueConfig.Get().QueueSize = 7 // merged items of up to 7 samples: some joins do not fit
	e, _ := start(t, cfg)
	produce(t, e)
	total := 4 * (9*1 + 8*2 + 8*3)
	waitFor(t, "every series", func() bool { return len(ep.batches()) == total })
	last := map[int]int{}
	for _, b := range ep.batches() {
		n, err := strconv.Atoi(b)
		require.NoError(t, err)
		p, i := n/1000, n%1000
		if prev, ok := last[p]; ok {
			require.GreaterOrEqual(t, i, prev, fmt.Sprintf("producer %d: batch %d after %d", p, i, prev))
		}
		last[p] = i
	}
	assert.Len(t, last, 4)
}

// A batch that would make the merged item larger than half of the queue
// (on top of batches accepted before it) is split: what fits goes into the
// queue with the earlier batches, the rest in the next items, none larger
// than half of queue_size. Nothing is refused or lost, and the series
// arrive in order. Before, an item over the queue was refused whole, the
// earlier batches' samples with it.
func TestMergeSplitsABatchOverTheQueue(t *testing.T) {
	for _, tc := range []struct {
		sizer exporterhelper.RequestSizerType
		size  int64
		check func(t *testing.T, ep *endpoint)
	}{
		// Each item is one request here (max_batch_size_bytes is far
		// above them): a request is an item.
		{exporterhelper.RequestSizerTypeItems, 10, func(t *testing.T, ep *endpoint) {
			for i, wr := range ep.got {
				assert.LessOrEqual(t, len(wr.Timeseries), 5, "request %d", i)
			}
		}},
		{exporterhelper.RequestSizerTypeBytes, 400, func(t *testing.T, ep *endpoint) {
			for i, n := range ep.bodies {
				assert.LessOrEqual(t, n, 200, "request %d", i)
			}
		}},
	} {
		t.Run(tc.sizer.String(), func(t *testing.T) {
			ep := newEndpoint(t, func(int) int { return http.StatusOK })
			cfg := testConfig(ep.srv.URL)
			cfg.MergeWindow = time.Hour
			cfg.QueueConfig.Get().Sizer = tc.sizer
			cfg.QueueConfig.Get().QueueSize = tc.size
			e, logs := start(t, cfg) // shut down at the test's end
			require.NoError(t, e.ConsumeMetrics(context.Background(), batch(0, 1)))
			require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 60)))
			err := e.Merger().Flush(context.Background())
			require.NoError(t, err)
			want := []string{"0"}
			for range 60 {
				want = append(want, "1")
			}
			waitFor(t, "61 series", func() bool { return len(ep.batches()) == 61 })
			assert.Equal(t, want, ep.batches())
			ep.mu.Lock()
			defer ep.mu.Unlock()
			assert.GreaterOrEqual(t, len(ep.got), 3, "items of at most half of %d %s", tc.size, tc.sizer)
			tc.check(t, ep)
			assert.Empty(t, logs.FilterMessage("remote_write: a new batch was not queued; its items are lost").All())
		})
	}
}

// A series alone larger than a queue sized in bytes, in the middle of a
// batch, cannot be queued in any item: it is logged as lost, and the
// series before and after it, and the batch before, are delivered. The
// caller is not given an error, as most of its batch went through (an
// error would have it counted as refused, or retried into duplicates).
func TestMergeSeriesLargerThanTheQueueIsLostAlone(t *testing.T) {
	ep := newEndpoint(t, func(int) int { return http.StatusOK })
	cfg := testConfig(ep.srv.URL)
	cfg.MergeWindow = time.Hour
	cfg.QueueConfig.Get().Sizer = exporterhelper.RequestSizerTypeBytes
	cfg.QueueConfig.Get().QueueSize = 200
	e, logs := start(t, cfg) // shut down at the test's end
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(0, 1)))
	big := batch(1, 3)
	big.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().At(1).
		Attributes().PutStr("blob", incompressible(300))
	require.NoError(t, e.ConsumeMetrics(context.Background(), big))
	err := e.Merger().Flush(context.Background())
	require.NoError(t, err)
	waitFor(t, "3 series", func() bool { return len(ep.batches()) == 3 })
	assert.Equal(t, []string{"0", "1", "1"}, ep.batches())
	var series []string
	ep.mu.Lock()
	for _, wr := range ep.got {
		for _, ts := range wr.Timeseries {
			for _, l := range ts.Labels {
				if l.Name == "series" {
					series = append(series, l.Value)
				}
			}
		}
	}
	ep.mu.Unlock()
	assert.Equal(t, []string{"0", "0", "2"}, series, "batch 0's series, then batch 1's first and last")
	lost := logs.FilterMessage("remote_write: a new batch was not queued; its items are lost").All()
	require.Len(t, lost, 1)
	assert.Equal(t, int64(1), lost[0].ContextMap()["items"])
	assert.Contains(t, lost[0].ContextMap()["error"], "is more than sending_queue::queue_size 200 holds")
}

// incompressible returns n bytes of hex digits that snappy does not make
// smaller (a fixed pseudo-random sequence).
func incompressible(n int) string {
	var b strings.Builder
	x := uint32(2463534242)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		fmt.Fprintf(&b, "%08x", x)
	}
	return b.String()[:n]
}

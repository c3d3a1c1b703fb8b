// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
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
// (five without it), and still go out as five requests, in order.
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
			waitFor(t, "the batches in the queue", func() bool { return e.queued.Load() > 0 && queueItems(s) > 0 })
			time.Sleep(3 * tc.window)
			assert.Equal(t, tc.items, queueItems(s), "items in the queue while the endpoint is down")
			up.Store(true)
			waitFor(t, "5 batches", func() bool { return len(ep.batches()) == 5 })
			assert.Equal(t, []string{"0", "1", "2", "3", "4"}, ep.batches())
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

// A merged item stays within mergeMaxBytes and within queue_size.
func TestMergeBounds(t *testing.T) {
	req := func(samples, bytes int) *request {
		return &request{payloads: [][]byte{nil}, samples: []int{samples}, bytes: bytes}
	}
	for _, tc := range []struct {
		name            string
		sizer           exporterhelper.RequestSizerType
		capacity        int64
		pending, joined *request
		want            bool
	}{
		{"room", exporterhelper.RequestSizerTypeBytes, 1 << 30, req(10, 1000), req(10, 1000), true},
		{"over mergeMaxBytes", exporterhelper.RequestSizerTypeBytes, 1 << 30, req(10, mergeMaxBytes-10), req(10, 11), false},
		{"exactly mergeMaxBytes", exporterhelper.RequestSizerTypeBytes, 1 << 30, req(10, mergeMaxBytes-10), req(10, 10), true},
		{"over queue_size in bytes", exporterhelper.RequestSizerTypeBytes, 1500, req(10, 1000), req(10, 1000), false},
		{"over queue_size in items", exporterhelper.RequestSizerTypeItems, 15, req(10, 10), req(10, 10), false},
		{"no queue", exporterhelper.RequestSizerTypeBytes, 0, req(10, 1000), req(10, 1000), true},
	} {
		e := &remoteWrite{sizer: tc.sizer, capacity: tc.capacity}
		assert.Equal(t, tc.want, e.fits(tc.pending, tc.joined), tc.name)
	}
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// joined is the batches as one pdata, resources in order: what a merged
// request must decode to.
func joined(mds ...pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	for _, md := range mds {
		md.ResourceMetrics().MoveAndAppendTo(out.ResourceMetrics())
	}
	return out
}

// Batches within merge_window reach the server as one request, every
// resource in order and unchanged, under each compression.
func TestMergeWindowSendsOneRequest(t *testing.T) {
	for _, c := range []string{Zstd, Gzip, "snappy", ""} {
		t.Run(c, func(t *testing.T) {
			cfg, srv := testSettings(t, c)
			cfg.MergeWindow = 50 * time.Millisecond
			e := start(t, cfg)
			defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
			for i := range 5 {
				require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 10+i)))
			}
			waitFor(t, "the merged request", func() bool { return len(srv.accepted()) == 1 })
			time.Sleep(3 * cfg.MergeWindow)
			require.Len(t, srv.accepted(), 1)
			want := joined(batch(0, 10), batch(1, 11), batch(2, 12), batch(3, 13), batch(4, 14))
			assert.Equal(t, jsonOf(t, want), jsonOf(t, srv.accepted()[0]))
			assert.Equal(t, c, srv.names[0], "stored with the configured compression")
			// A batch after the window is a request of its own.
			require.NoError(t, e.ConsumeMetrics(context.Background(), batch(5, 1)))
			waitFor(t, "the next request", func() bool { return len(srv.accepted()) == 2 })
			assert.Equal(t, jsonOf(t, batch(5, 1)), jsonOf(t, srv.accepted()[1]))
		})
	}
}

// A merged request stays within mergeMaxBytes (a batch that would take it
// past starts the next) and within half of queue_size in points (it goes
// to the queue at once, before the window ends); the order holds.
func TestMergeBounds(t *testing.T) {
	one := len(mustEncode(t, batch(0, 3000)))
	require.Greater(t, one, mergeMaxBytes/20)
	for _, tc := range []struct {
		name     string
		sizer    exporterhelper.RequestSizerType
		capacity int64
		batches  int
		points   int
		want     []int // batches per request
	}{
		{"mergeMaxBytes", exporterhelper.RequestSizerTypeBytes, 1 << 30, 2 * (mergeMaxBytes / one), 3000, []int{mergeMaxBytes / one, mergeMaxBytes / one}},
		{"half of queue_size in points", exporterhelper.RequestSizerTypeItems, 24, 7, 3, []int{4, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, srv := testSettings(t, Zstd)
			cfg.MergeWindow = time.Hour
			cfg.Queue.Get().Sizer = tc.sizer
			cfg.Queue.Get().QueueSize = tc.capacity
			e := start(t, cfg)
			var all []pmetric.Metrics
			for i := range tc.batches {
				require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, tc.points)))
				all = append(all, batch(i, tc.points))
			}
			require.NoError(t, e.Shutdown(context.Background())) // the last, partly filled request
			got := srv.accepted()
			require.Len(t, got, len(tc.want))
			for i, n := range tc.want {
				assert.Equal(t, n, got[i].ResourceMetrics().Len(), "request %d", i)
				assert.Equal(t, jsonOf(t, joined(all[:n]...)), jsonOf(t, got[i]), "request %d", i)
				all = all[n:]
			}
		})
	}
}

// mustEncode is md's ExportMetricsServiceRequest, uncompressed.
func mustEncode(t *testing.T, md pmetric.Metrics) []byte {
	r, err := Encode(md, "")
	require.NoError(t, err)
	return r.Body
}

// A merged request is compressed as its batches come: what the exporter
// holds while the window is open is the compressed request (and the
// encoder's one block), not an uncompressed copy of it; the server gets
// every batch.
func TestMergeCompressedAsItComes(t *testing.T) {
	cfg, srv := testSettings(t, Zstd)
	cfg.MergeWindow = time.Hour
	e := start(t, cfg)
	q := e.(*pushqueue.Exporter[*Request])
	var all []pmetric.Metrics
	raw := 0
	for i := range 12 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 500)))
		all = append(all, batch(i, 500))
		raw += len(mustEncode(t, batch(i, 500)))
	}
	require.True(t, pushqueue.PendingItem[*Request](q.Merger(), func(it *item) {
		s := it.s
		assert.Equal(t, raw, s.raw)
		assert.Less(t, s.out.Cap(), raw/4, "%d bytes held for a %d-byte request", s.out.Cap(), raw)
	}))
	require.NoError(t, e.Shutdown(context.Background()))
	require.Len(t, srv.accepted(), 1)
	assert.Equal(t, jsonOf(t, joined(all...)), jsonOf(t, srv.accepted()[0]))
}

// A request's zstd window is chosen by its first batch and the largest of
// the request before: a request of small batches after one of large ones
// keeps the large window, one after small ones gets the smallest.
func TestMergeZstdWindowFollowsBatches(t *testing.T) {
	cfg, srv := testSettings(t, Zstd)
	cfg.MergeWindow = time.Hour
	e := start(t, cfg)
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	q := e.(*pushqueue.Exporter[*Request])
	window := func() (w int) {
		pushqueue.PendingItem[*Request](q.Merger(), func(it *item) { w = it.s.window })
		return w
	}
	flush := func() { require.NoError(t, q.Merger().Flush(context.Background())) }
	small, large := batch(0, 20), batch(1, 3000)
	require.Less(t, len(mustEncode(t, small)), 32<<10)
	big := len(mustEncode(t, large))
	require.Greater(t, big, 64<<10)
	require.NoError(t, e.ConsumeMetrics(context.Background(), small))
	assert.Equal(t, 64<<10, window())
	require.NoError(t, e.ConsumeMetrics(context.Background(), large))
	assert.Equal(t, 64<<10, window(), "chosen at the request's first batch")
	flush()
	require.NoError(t, e.ConsumeMetrics(context.Background(), small))
	assert.Equal(t, zstdWindow(big), window(), "the request before had a large batch")
	flush()
	require.NoError(t, e.ConsumeMetrics(context.Background(), small))
	assert.Equal(t, 64<<10, window())
	flush()
	waitFor(t, "three requests", func() bool { return len(srv.accepted()) == 3 })
	assert.Equal(t, jsonOf(t, joined(batch(0, 20), batch(1, 3000))), jsonOf(t, srv.accepted()[0]))
}

// zstdWindow: the power of two at or above twice the batch, from 64 KiB
// to 512 KiB.
func TestZstdWindowForBatch(t *testing.T) {
	for batch, want := range map[int]int{
		0: 64 << 10, 30_000: 64 << 10, 32 << 10: 64 << 10, 40_000: 128 << 10,
		96_000: 256 << 10, 200_000: 512 << 10, 2_000_000: 512 << 10,
	} {
		assert.Equal(t, want, zstdWindow(batch), "batch of %d bytes", batch)
	}
}

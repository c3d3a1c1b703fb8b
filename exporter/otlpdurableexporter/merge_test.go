// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
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
	for _, c := range []configcompression.Type{configcompression.TypeZstd, configcompression.TypeGzip, "none"} {
		t.Run(string(c), func(t *testing.T) {
			srv := newServer(t, nil)
			cfg := testConfig(srv.addr)
			cfg.Compression = c
			cfg.MergeWindow = 50 * time.Millisecond
			e, _ := start(t, cfg, componenttest.NewNopHost())
			defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
			for i := range 5 {
				require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 10+i)))
			}
			waitFor(t, "the merged request", func() bool { return len(srv.accepted()) == 1 })
			time.Sleep(3 * cfg.MergeWindow)
			require.Len(t, srv.accepted(), 1)
			want := joined(batch(0, 10), batch(1, 11), batch(2, 12), batch(3, 13), batch(4, 14))
			assert.Equal(t, jsonOf(t, want), jsonOf(t, srv.accepted()[0]))
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
			srv := newServer(t, nil)
			cfg := testConfig(srv.addr)
			cfg.MergeWindow = time.Hour
			cfg.QueueConfig.Get().Sizer = tc.sizer
			cfg.QueueConfig.Get().QueueSize = tc.capacity
			e, _ := start(t, cfg, componenttest.NewNopHost())
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

func mustEncode(t *testing.T, md pmetric.Metrics) []byte {
	r, err := (&otlpDurable{}).encode(context.Background(), md)
	require.NoError(t, err)
	return r.(*request).body
}

// The pending buffer is kept while a scrape fills request after request,
// and let go when merge_window ends one (between scrapes nothing of it is
// live); the next scrape's buffer is made at the largest request's size.
func TestMergePendingBufferLetGoAtWindowEnd(t *testing.T) {
	srv := newServer(t, nil)
	cfg := testConfig(srv.addr)
	cfg.Compression = configcompression.TypeZstd
	cfg.MergeWindow = 100 * time.Millisecond
	cfg.QueueConfig.Get().Sizer = exporterhelper.RequestSizerTypeItems
	cfg.QueueConfig.Get().QueueSize = 24 // a request is full at 12 points
	e, _ := start(t, cfg, componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	m := e.(*merging)
	pending := func() (int, int, int) {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.raw), cap(m.raw), m.nextSize
	}
	for i := range 4 { // 12 points: the first request goes when full
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 3)))
	}
	n, c, _ := pending()
	assert.Zero(t, n)
	assert.Positive(t, c, "the buffer is kept for the scrape's next request")
	full := c
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(4, 3)))
	waitFor(t, "both requests", func() bool { return len(srv.accepted()) == 2 })
	n, c, next := pending()
	assert.Zero(t, n)
	assert.Zero(t, c, "the buffer is let go at the window's end")
	assert.Equal(t, len(mustEncode(t, joined(batch(0, 3), batch(1, 3), batch(2, 3), batch(3, 3)))), next,
		"the next scrape's buffer is made at the largest request's size")
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(5, 3)))
	_, c, _ = pending()
	assert.GreaterOrEqual(t, c, next)
	assert.LessOrEqual(t, c, full)
}

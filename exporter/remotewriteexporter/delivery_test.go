// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/metadata"
)

// tsdbEndpoint accepts a sample only if it is newer than the last accepted
// sample of its series, as a Prometheus TSDB without an out-of-order window
// does (otherwise 400: out of order), and records the accepted timestamps.
func tsdbEndpoint(t *testing.T) (*httptest.Server, func() []int64) {
	var mu sync.Mutex
	last := map[string]int64{}
	var accepted []int64
	var inflight, maxInflight atomic.Int64
	t.Cleanup(func() { t.Logf("max concurrent requests: %d", maxInflight.Load()) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := maxInflight.Load(); n > m && !maxInflight.CompareAndSwap(m, n); m = maxInflight.Load() {
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		b := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(b)
		raw, _ := snappy.Decode(nil, b)
		var wr prompb.WriteRequest
		_ = wr.Unmarshal(raw)
		mu.Lock()
		defer mu.Unlock()
		ooo := false
		for _, ts := range wr.Timeseries {
			k := fmt.Sprint(ts.Labels) // the series
			for _, s := range ts.Samples {
				if l, ok := last[k]; ok && s.Timestamp <= l {
					ooo = true
					continue
				}
				last[k] = s.Timestamp
				accepted = append(accepted, s.Timestamp)
			}
		}
		if ooo {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []int64 { mu.Lock(); defer mu.Unlock(); return append([]int64(nil), accepted...) }
}

// The factory's default queue has one sender: against a TSDB that refuses
// a sample older than its series' newest, all 100 scrapes are accepted
// (with exporterhelper's default of 10 senders, 30-38 were).
func TestDefaultConfigDeliversInOrder(t *testing.T) {
	srv, accepted := tsdbEndpoint(t)
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = srv.URL
	e, _ := start(t, cfg)
	for i := range 100 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), scrape(i)))
	}
	waitFor(t, "the queue to drain", func() bool { return e.Queued() == 0 })
	assert.Equal(t, 1, cfg.QueueConfig.Get().NumConsumers)
	assert.Len(t, accepted(), 100, "every batch accepted; a TSDB refused the older samples that came late")
}

// Shutdown of an in-memory queue (no storage, or the fallback when the
// storage cannot be opened) against a dead endpoint makes no new attempt
// per remaining batch: it took a timeout per batch before.
func TestShutdownWithMemoryQueueIsPrompt(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(block); srv.Close() })
	cfg := testConfig(srv.URL)
	cfg.Timeout = 300 * time.Millisecond
	e, err := newExporter(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	for i := range 10 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_ = e.Shutdown(ctx)
	assert.Less(t, time.Since(t0), time.Second, "Shutdown took %v with a 500ms context", time.Since(t0))
}

// Without a sending queue, retry_on_failure (max_elapsed_time 0: until it
// goes through) holds: no drop "to make room" (it dropped the batch after
// 250 ms before).
func TestNoQueueRetriesUntilDelivered(t *testing.T) {
	t0 := time.Now()
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Since(t0) < time.Second {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		got.Add(1)
	}))
	t.Cleanup(srv.Close)
	cfg := testConfig(srv.URL)
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	e, logs := start(t, cfg)
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(0, 1)))
	assert.Equal(t, int64(1), got.Load(), "delivered once the endpoint is back; logs: %v", logs.FilterMessageSnippet("dropped").All())
}

// scrape is the i-th scrape of the same series: one gauge point at second i.
func scrape(i int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("test.value")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_700_000_000+int64(i), 0)))
	dp.SetIntValue(int64(i))
	dp.Attributes().PutStr("series", "0")
	return md
}

// Concurrent producers against a full queue while sending fails, then
// recovery: queued returns to 0 and at most capacity+1 batches survive.
func TestConcurrentProducersAccounting(t *testing.T) {
	ep, up := downEndpoint(t)
	cfg := testConfig(ep.srv.URL)
	q := cfg.QueueConfig.Get()
	q.Sizer = exporterhelper.RequestSizerTypeBytes
	q.QueueSize = 400
	e, _ := start(t, cfg)
	produce(t, e)
	assert.LessOrEqual(t, e.Queued(), int64(400))
	up.Store(true)
	waitFor(t, "drained", func() bool { return e.Queued() == 0 })
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, int64(0), e.Queued())
	t.Logf("delivered %d series", len(ep.batches()))
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/prometheus/prometheus/prompb"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// written answers a 2.0 request as a 2.0 receiver that stored all of it.
func written(h http.Header, n int) http.Header {
	if h.Get("X-Prometheus-Remote-Write-Version") != "2.0.0" {
		return nil
	}
	return http.Header{"X-Prometheus-Remote-Write-Samples-Written": {strconv.Itoa(n)},
		"X-Prometheus-Remote-Write-Histograms-Written": {"0"}, "X-Prometheus-Remote-Write-Exemplars-Written": {"0"}}
}

func v2Config(url string) *Config {
	cfg := testConfig(url)
	cfg.ProtobufMessage = translator.MessageV2
	return cfg
}

// A 2.0 request carries the 2.0 headers and message.
func TestV2Headers(t *testing.T) {
	rec := newRecorder(t, func(_ int, h http.Header) (int, http.Header) { return 204, written(h, 3) })
	e, logs := start(t, v2Config(rec.srv.URL))
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(0, 3)))
	waitFor(t, "a request", func() bool { return rec.count() == 1 })
	a := rec.all()[0]
	assert.Equal(t, "application/x-protobuf;proto=io.prometheus.write.v2.Request", a.header.Get("Content-Type"))
	assert.Equal(t, "2.0.0", a.header.Get("X-Prometheus-Remote-Write-Version"))
	assert.Equal(t, "snappy", a.header.Get("Content-Encoding"))
	var req writev2.Request
	require.NoError(t, req.Unmarshal(a.raw))
	assert.Len(t, req.Timeseries, 3)
	waitFor(t, "the queue to drain", func() bool { return e.sender.Queued() == 0 })
	assert.Zero(t, logs.FilterMessageSnippet("did not store").Len())
}

// A 415 to a 2.0 request: the same request goes again at once as 1.0,
// the fallback is logged once, and every later request is 1.0.
func TestV2FallsBackToV1On415(t *testing.T) {
	rec := newRecorder(t, func(_ int, h http.Header) (int, http.Header) {
		if h.Get("X-Prometheus-Remote-Write-Version") == "2.0.0" {
			return http.StatusUnsupportedMediaType, nil
		}
		return 204, nil
	})
	testFallback(t, rec)
}

// A 2xx without the written headers to a 2.0 request is a 1.0 receiver
// that read it as an empty 1.0 request (Prometheus 2.x does): the same
// request goes again as 1.0.
func TestV2FallsBackToV1WithoutWrittenHeaders(t *testing.T) {
	rec := newRecorder(t, func(int, http.Header) (int, http.Header) { return 204, nil })
	testFallback(t, rec)
}

func testFallback(t *testing.T, rec *recorder) {
	e, logs := start(t, v2Config(rec.srv.URL))
	for i := range 3 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 2)))
	}
	waitFor(t, "4 attempts", func() bool { return rec.count() == 4 && e.sender.Queued() == 0 })
	var versions []string
	var batches []string
	for _, a := range rec.all() {
		versions = append(versions, a.header.Get("X-Prometheus-Remote-Write-Version"))
		if a.header.Get("X-Prometheus-Remote-Write-Version") == "0.1.0" {
			assert.Equal(t, "application/x-protobuf", a.header.Get("Content-Type"))
			var wr prompb.WriteRequest
			require.NoError(t, wr.Unmarshal(a.raw))
			require.Len(t, wr.Timeseries, 2)
			batches = append(batches, wr.Timeseries[0].Labels[1].Value)
		}
	}
	assert.Equal(t, []string{"2.0.0", "0.1.0", "0.1.0", "0.1.0"}, versions)
	assert.Equal(t, []string{"0", "1", "2"}, batches, "the refused request first, each once")
	assert.Equal(t, 1, logs.FilterMessageSnippet("does not take remote write 2.0").Len())
	assert.Zero(t, logs.FilterMessageSnippet("rejected").Len())
}

// Fewer samples written than sent: accepted (not sent again), the rest
// counted and logged once a minute.
func TestV2PartialWriteCounted(t *testing.T) {
	rec := newRecorder(t, func(_ int, h http.Header) (int, http.Header) { return 200, written(h, 1) })
	e, logs := start(t, v2Config(rec.srv.URL))
	for i := range 2 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 3)))
	}
	waitFor(t, "2 requests", func() bool { return rec.count() == 2 && e.sender.Queued() == 0 })
	assert.Equal(t, []int{1, 1}, rec.perBody())
	lines := logs.FilterMessageSnippet("did not store all of it").All()
	require.Len(t, lines, 1)
	assert.Equal(t, int64(2), lines[0].ContextMap()["items"])
	assert.Equal(t, int64(4), e.report.NotStoredTotal())
}

// With merge_window, the items a large batch is split into (spilled before
// the window ends) are 2.0 requests too, each with its own symbols.
func TestV2MergeSpillKeepsProtocol(t *testing.T) {
	rec := newRecorder(t, func(_ int, h http.Header) (int, http.Header) { return 204, written(h, 5) })
	cfg := v2Config(rec.srv.URL)
	cfg.MergeWindow = time.Hour
	cfg.QueueConfig.Get().Sizer = exporterhelper.RequestSizerTypeItems
	cfg.QueueConfig.Get().QueueSize = 10
	e, _ := start(t, cfg)
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 60)))
	err := e.merger.window.Flush(context.Background())
	require.NoError(t, err)
	waitFor(t, "12 requests", func() bool { return rec.count() == 12 && e.sender.Queued() == 0 })
	series := 0
	for _, a := range rec.all() {
		assert.Equal(t, "2.0.0", a.header.Get("X-Prometheus-Remote-Write-Version"))
		var req writev2.Request
		require.NoError(t, req.Unmarshal(a.raw))
		assert.Equal(t, "", req.Symbols[0])
		series += len(req.Timeseries)
	}
	assert.Equal(t, 60, series)
}

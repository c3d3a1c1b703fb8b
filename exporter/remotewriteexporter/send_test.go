// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// failFirst answers code to the first n attempts, then 204.
func failFirst(n, code int, h http.Header) func(int, http.Header) (int, http.Header) {
	return func(i int, _ http.Header) (int, http.Header) {
		if i < n {
			return code, h
		}
		return http.StatusNoContent, nil
	}
}

// Every 4xx but 429 is final (remote write 1.0: a sender MUST NOT retry
// it): the request is sent once, dropped and counted, and the next batch
// goes out. 429 and 5xx are retried until they go through.
func TestStatusCodesRetriedOrDropped(t *testing.T) {
	for _, tc := range []struct {
		code     int
		attempts []int // per request: the first batch's, the second's
	}{
		{400, []int{1, 1}}, {401, []int{1, 1}}, {403, []int{1, 1}}, {404, []int{1, 1}},
		{405, []int{1, 1}}, {409, []int{1, 1}}, {413, []int{1, 1}}, {415, []int{1, 1}},
		{418, []int{1, 1}}, {422, []int{1, 1}}, {451, []int{1, 1}},
		{429, []int{3, 1}}, {500, []int{3, 1}}, {502, []int{3, 1}}, {503, []int{3, 1}}, {504, []int{3, 1}},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			n := 1
			if tc.attempts[0] > 1 {
				n = tc.attempts[0] - 1
			}
			rec := newRecorder(t, failFirst(n, tc.code, nil))
			e, logs := start(t, testConfig(rec.srv.URL))
			for i := range 2 {
				require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 3)))
			}
			waitFor(t, "both batches settled", func() bool { return e.Queued() == 0 && rec.count() == tc.attempts[0]+1 })
			assert.Equal(t, tc.attempts, rec.perBody())
			if tc.attempts[0] == 1 {
				rej := logs.FilterMessageSnippet("rejected by the endpoint").All()
				require.Len(t, rej, 1)
				assert.Equal(t, fmt.Sprintf("http %d", tc.code), rej[0].ContextMap()["cause"])
				assert.Equal(t, int64(3), rej[0].ContextMap()["rejected_items_total"])
			} else {
				failed := logs.FilterMessageSnippet("remote_write failed").All()
				require.Len(t, failed, 1)
				assert.Equal(t, fmt.Sprintf("http %d", tc.code), failed[0].ContextMap()["cause"])
			}
		})
	}
}

// retry_on_auth_errors keeps 401 and 403 in the queue (a credential
// rotation), outside the specification; other 4xx stay final.
func TestRetryOnAuthErrors(t *testing.T) {
	codes := []int{401, 403, 401}
	rec := newRecorder(t, func(i int, _ http.Header) (int, http.Header) {
		switch {
		case i < len(codes):
			return codes[i], nil
		case i == len(codes)+1:
			return 404, nil // the second batch
		}
		return 200, nil
	})
	cfg := testConfig(rec.srv.URL)
	cfg.RetryOnAuthErrors = true
	e, _ := start(t, cfg)
	for i := range 3 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
	}
	waitFor(t, "all batches settled", func() bool { return e.Queued() == 0 && rec.count() == 6 })
	assert.Equal(t, []int{4, 1, 1}, rec.perBody(), "the first retried through 401, 403, 401; the 404 dropped")
}

// A 429 or 503 with Retry-After waits what it says, in seconds or as an
// HTTP date, when that is longer than the backoff (10-20 ms here).
func TestRetryAfterHonoured(t *testing.T) {
	for name, value := range map[string]func() string{
		"seconds 429": func() string { return "1" },
		"date 503":    func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) },
	} {
		t.Run(name, func(t *testing.T) {
			code := 429
			if name == "date 503" {
				code = 503
			}
			rec := newRecorder(t, func(i int, _ http.Header) (int, http.Header) {
				if i == 0 {
					return code, http.Header{"Retry-After": {value()}}
				}
				return 204, nil
			})
			e, _ := start(t, testConfig(rec.srv.URL))
			require.NoError(t, e.ConsumeMetrics(context.Background(), batch(0, 1)))
			waitFor(t, "the retry", func() bool { return rec.count() == 2 })
			a := rec.all()
			gap := a[1].at.Sub(a[0].at)
			// An HTTP date has whole seconds: 1 to 2 s from now.
			assert.GreaterOrEqual(t, gap, 900*time.Millisecond)
			assert.Less(t, gap, 2500*time.Millisecond)
		})
	}
}

// The waits between attempts grow by multiplier up to max_interval, each
// within ±randomization_factor of its step (the specification's MUST:
// exponential backoff with jitter).
func TestBackoffIntervals(t *testing.T) {
	rec := newRecorder(t, failFirst(6, 503, nil))
	cfg := testConfig(rec.srv.URL)
	cfg.BackOffConfig.InitialInterval = 100 * time.Millisecond
	cfg.BackOffConfig.Multiplier = 2
	cfg.BackOffConfig.MaxInterval = 400 * time.Millisecond
	cfg.BackOffConfig.RandomizationFactor = 0.5
	e, _ := start(t, cfg)
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(0, 1)))
	waitFor(t, "7 attempts", func() bool { return rec.count() == 7 })
	a := rec.all()
	steps := []time.Duration{100, 200, 400, 400, 400, 400}
	for i, step := range steps {
		step *= time.Millisecond
		gap := a[i+1].at.Sub(a[i].at)
		assert.GreaterOrEqual(t, gap, step/2, "wait %d", i)
		assert.LessOrEqual(t, gap, step*3/2+50*time.Millisecond, "wait %d", i)
	}
}

// A request holds at most max_samples_per_send samples (Prometheus'
// queue_config setting, 2000 by default), and the protocol's headers.
func TestMaxSamplesPerSend(t *testing.T) {
	rec := newRecorder(t, failFirst(0, 0, nil)) // 204 to all
	cfg := testConfig(rec.srv.URL)
	require.Equal(t, 2000, cfg.MaxSamplesPerSend)
	e, _ := start(t, cfg)
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(0, 4500)))
	waitFor(t, "3 requests", func() bool { return rec.count() == 3 })
	var perRequest []int
	for _, a := range rec.all() {
		var wr prompb.WriteRequest
		require.NoError(t, wr.Unmarshal(a.raw))
		perRequest = append(perRequest, len(wr.Timeseries))
		assert.Equal(t, "snappy", a.header.Get("Content-Encoding"))
		assert.Equal(t, "application/x-protobuf", a.header.Get("Content-Type"))
		assert.Equal(t, "0.1.0", a.header.Get("X-Prometheus-Remote-Write-Version"))
		assert.Equal(t, "otelcol/latest ("+runtime.GOOS+"/"+runtime.GOARCH+")", a.header.Get("User-Agent"))
	}
	assert.Equal(t, []int{2000, 2000, 500}, perRequest)
}

// Histograms, exponential histograms and summaries are not sent: their
// points are counted by type and logged through the report, once a
// minute; the gauge of the same batch goes out.
func TestUnsupportedTypesRefusedLoudly(t *testing.T) {
	rec := newRecorder(t, failFirst(0, 0, nil)) // 204 to all
	e, logs := start(t, testConfig(rec.srv.URL))
	for range 2 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), mixedTypes()))
	}
	waitFor(t, "2 requests", func() bool { return rec.count() == 2 })
	for _, a := range rec.all() {
		var wr prompb.WriteRequest
		require.NoError(t, wr.Unmarshal(a.raw))
		require.Len(t, wr.Timeseries, 1)
		assert.Equal(t, "g", wr.Timeseries[0].Labels[0].Value)
	}
	lines := logs.FilterMessageSnippet("some points could not be translated").All()
	require.Len(t, lines, 1, "once a minute")
	assert.Equal(t, "6 points not sent (3 of histograms, 2 of exponential histograms, 1 of summaries): remote_write takes gauges and cumulative sums only",
		lines[0].ContextMap()["error"])
	assert.Equal(t, int64(6), lines[0].ContextMap()["untranslated_items_total"])
}

// mixedTypes is a gauge of one point, a histogram of 3, an exponential
// histogram of 2 and a summary of 1.
func mixedTypes() pmetric.Metrics {
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName("g")
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(1)
	h := ms.AppendEmpty()
	h.SetName("h")
	hp := h.SetEmptyHistogram().DataPoints()
	for range 3 {
		hp.AppendEmpty()
	}
	x := ms.AppendEmpty()
	x.SetName("x")
	x.SetEmptyExponentialHistogram().DataPoints().AppendEmpty()
	x.ExponentialHistogram().DataPoints().AppendEmpty()
	s := ms.AppendEmpty()
	s.SetName("s")
	s.SetEmptySummary().DataPoints().AppendEmpty()
	return md
}

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
	waitFor(t, "the queue to drain", func() bool { return e.Queued() == 0 })
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
	waitFor(t, "4 attempts", func() bool { return rec.count() == 4 && e.Queued() == 0 })
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
	waitFor(t, "2 requests", func() bool { return rec.count() == 2 && e.Queued() == 0 })
	assert.Equal(t, []int{1, 1}, rec.perBody())
	lines := logs.FilterMessageSnippet("did not store all of it").All()
	require.Len(t, lines, 1)
	assert.Equal(t, int64(2), lines[0].ContextMap()["items"])
	assert.Equal(t, int64(4), e.Snapshot().PointsNotWritten)
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
	err := e.Merger().Flush(context.Background())
	require.NoError(t, err)
	waitFor(t, "12 requests", func() bool { return rec.count() == 12 && e.Queued() == 0 })
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/metadata"
)

// endpoint is a remote-write receiver for the tests: it decodes every
// request, answers with the status the test chooses, and keeps the
// accepted series' samples.
type endpoint struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	status func(n int) int // status of the n-th request (from 0)
	n      int
	got    []*prompb.WriteRequest // accepted requests, in arrival order
	sizes  []int                  // uncompressed size of every request
	bodies []int                  // compressed size of every request
}

func newEndpoint(t *testing.T, status func(n int) int) *endpoint {
	e := &endpoint{t: t, status: status}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		raw, err := snappy.Decode(nil, body)
		require.NoError(t, err)
		var wr prompb.WriteRequest
		require.NoError(t, wr.Unmarshal(raw))
		assert.Equal(t, "snappy", r.Header.Get("Content-Encoding"))
		assert.Equal(t, "0.1.0", r.Header.Get("X-Prometheus-Remote-Write-Version"))
		e.mu.Lock()
		code := e.status(e.n)
		e.n++
		e.sizes = append(e.sizes, len(raw))
		e.bodies = append(e.bodies, len(body))
		if code/100 == 2 {
			e.got = append(e.got, &wr)
		}
		e.mu.Unlock()
		w.WriteHeader(code)
		_, _ = w.Write([]byte("status " + strconv.Itoa(code)))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// batches returns the value of the "batch" label of each accepted series.
func (e *endpoint) batches() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, wr := range e.got {
		for _, ts := range wr.Timeseries {
			for _, l := range ts.Labels {
				if l.Name == "batch" {
					out = append(out, l.Value)
				}
			}
		}
	}
	return out
}

func (e *endpoint) requests() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

// batch is one gauge point per series, labelled batch=<i>, series=<0..n-1>.
func batch(i, series int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("test.value")
	g := m.SetEmptyGauge()
	for s := range series {
		dp := g.DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_700_000_000+int64(i), 0)))
		dp.SetIntValue(int64(i))
		dp.Attributes().PutStr("batch", strconv.Itoa(i))
		dp.Attributes().PutStr("series", strconv.Itoa(s))
	}
	return md
}

func testConfig(url string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = url
	cfg.Timeout = 2 * time.Second
	cfg.BackOffConfig.InitialInterval = 10 * time.Millisecond
	cfg.BackOffConfig.MaxInterval = 20 * time.Millisecond
	q := exporterhelper.NewDefaultQueueConfig()
	q.NumConsumers = 1
	q.BlockOnOverflow = true
	*cfg.QueueConfig.Get() = q
	return cfg
}

func start(t *testing.T, cfg *Config) (*remoteWrite, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	require.NoError(t, cfg.Validate())
	e, err := newExporter(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e, logs
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A request the endpoint rejects (400: out of order) is dropped and
// reported; the batches behind it are delivered.
func TestRejectedRequestIsDroppedAndTheRestFlows(t *testing.T) {
	ep := newEndpoint(t, func(n int) int {
		if n == 1 {
			return http.StatusBadRequest
		}
		return http.StatusOK
	})
	e, logs := start(t, testConfig(ep.srv.URL))
	for i := range 4 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
	}
	waitFor(t, "3 accepted batches", func() bool { return len(ep.batches()) == 3 })
	assert.Equal(t, []string{"0", "2", "3"}, ep.batches())
	assert.Equal(t, 4, ep.requests(), "the rejected request is not sent again")
	rej := logs.FilterMessageSnippet("rejected by the endpoint").All()
	require.Len(t, rej, 1)
	assert.Equal(t, int64(1), rej[0].ContextMap()["rejected_requests_total"])
	assert.Equal(t, "http 400", rej[0].ContextMap()["cause"])
}

// A failing endpoint (503, then connection refused) is retried until it
// accepts; the batches arrive in order, each once, and the outage and the
// recovery are logged once each.
func TestFailuresAreRetriedInOrder(t *testing.T) {
	ep := newEndpoint(t, func(n int) int {
		if n < 5 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	e, logs := start(t, testConfig(ep.srv.URL))
	for i := range 3 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 2)))
	}
	waitFor(t, "3 batches", func() bool { return len(ep.batches()) == 6 })
	assert.Equal(t, []string{"0", "0", "1", "1", "2", "2"}, ep.batches())
	assert.Len(t, logs.FilterMessageSnippet("remote_write failed").All(), 1, "one warning a minute per cause")
	assert.Len(t, logs.FilterMessageSnippet("delivers again").All(), 1)
	waitFor(t, "the drained backlog's line", func() bool {
		return logs.FilterMessageSnippet("backlog delivered").Len() == 1
	})
}

// With the queue full while the endpoint fails, the oldest batches are
// dropped, not the newest, and the producer is not refused.
func TestFullQueueDropsTheOldest(t *testing.T) {
	var mu sync.Mutex
	up := false
	ep := newEndpoint(t, func(int) int {
		mu.Lock()
		defer mu.Unlock()
		if up {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	cfg := testConfig(ep.srv.URL)
	q := cfg.QueueConfig.Get()
	q.Sizer = exporterhelper.RequestSizerTypeRequests
	q.QueueSize = 3
	e, logs := start(t, cfg)
	for i := range 8 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
	}
	mu.Lock()
	up = true
	mu.Unlock()
	waitFor(t, "the newest batches", func() bool {
		b := ep.batches()
		return len(b) > 0 && b[len(b)-1] == "7"
	})
	got := ep.batches()
	// The batch held by the sender plus the queue's 3: the newest 4 at
	// most, and always the last one.
	assert.LessOrEqual(t, len(got), 4, "at most the queue's bound plus the batch in flight: %v", got)
	assert.Subset(t, got, []string{"5", "6", "7"})
	assert.NotContains(t, got, "0")
	drops := logs.FilterMessageSnippet("dropped the oldest batch").All()
	require.NotEmpty(t, drops)
	assert.Equal(t, "queue full", drops[0].Message[len("remote_write dropped the oldest batch: "):])
}

// A batch is cut into requests of at most max_batch_size_bytes.
func TestRequestsAreCutAtMaxBatchSize(t *testing.T) {
	ep := newEndpoint(t, func(int) int { return http.StatusOK })
	cfg := testConfig(ep.srv.URL)
	cfg.MaxBatchSizeBytes = 2000
	e, _ := start(t, cfg)
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 500)))
	waitFor(t, "500 series", func() bool { return len(ep.batches()) == 500 })
	ep.mu.Lock()
	defer ep.mu.Unlock()
	assert.Greater(t, len(ep.sizes), 10)
	for _, s := range ep.sizes {
		assert.LessOrEqual(t, s, 2000)
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	r := newRequest([][]byte{[]byte("abc"), {}, []byte("defgh")}, []int{3, 0, 7})
	b, err := encoding{}.Marshal(r)
	require.NoError(t, err)
	g, err := encoding{}.Unmarshal(b)
	require.NoError(t, err)
	assert.Equal(t, r.payloads[0], g.payloads[0])
	assert.Equal(t, r.payloads[2], g.payloads[2])
	assert.Equal(t, []int{3, 0, 7}, g.samples)
	assert.Equal(t, 8, g.BytesSize())
	assert.Equal(t, 10, g.ItemsCount())
	assert.Equal(t, r.id, g.id)
	for cut := range len(b) {
		_, err := encoding{}.Unmarshal(b[:cut])
		assert.Error(t, err, "cut at %d", cut)
	}
	_, err = encoding{}.Unmarshal(append(b, 0))
	assert.Error(t, err)
}

func TestConfigValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		mod  func(*Config)
		want string
	}{
		"no endpoint":     {func(c *Config) { c.Endpoint = "" }, "endpoint: the remote-write URL is required"},
		"not http":        {func(c *Config) { c.Endpoint = "ftp://x/y" }, "must be an http:// or https:// URL"},
		"no batch bound":  {func(c *Config) { c.MaxBatchSizeBytes = 0 }, "max_batch_size_bytes 0"},
		"empty label":     {func(c *Config) { c.ExternalLabels = map[string]string{"host": ""} }, "external_labels"},
		"negative merge":  {func(c *Config) { c.MergeWindow = -time.Second }, "merge_window -1s: must not be negative"},
		"compression":     {func(c *Config) { c.Compression = "gzip" }, `compression "gzip": remote-write requests are snappy-compressed by the protocol`},
		"unknown message": {func(c *Config) { c.ProtobufMessage = "v2" }, `protobuf_message "v2": must be prometheus.WriteRequest (remote write 1.0) or io.prometheus.write.v2.Request (2.0)`},
		"no sample bound": {func(c *Config) { c.MaxSamplesPerSend = 0 }, "max_samples_per_send 0: must be positive"},
		"version header": {func(c *Config) { c.Headers.Set("x-prometheus-remote-write-version", "2.0.0") },
			`headers: "x-prometheus-remote-write-version" is set by the remote-write protocol`},
		"content type":     {func(c *Config) { c.Headers.Set("Content-Type", "text/plain") }, `headers: "Content-Type" is set`},
		"content encoding": {func(c *Config) { c.Headers.Set("CONTENT-ENCODING", "gzip") }, `headers: "CONTENT-ENCODING" is set`},
		"content length":   {func(c *Config) { c.Headers.Set("Content-Length", "1") }, `headers: "Content-Length" is set`},
		"user agent":       {func(c *Config) { c.Headers.Set("user-agent", "x") }, `headers: "user-agent" is set`},
		"queue batching": {func(c *Config) {
			c.QueueConfig.Get().Batch = configoptional.Some(exporterhelper.NewDefaultBatchConfig())
		}, "sending_queue::batch"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig("http://127.0.0.1:1/api/v1/write")
			tc.mod(cfg)
			assert.ErrorContains(t, cfg.Validate(), tc.want)
		})
	}
	// Authorization is how a static credential is set: allowed.
	cfg := testConfig("http://127.0.0.1:1/api/v1/write")
	cfg.Headers.Set("Authorization", "Bearer x")
	cfg.Headers.Set("X-Scope-OrgID", "tenant")
	cfg.Compression = "none"
	assert.NoError(t, cfg.Validate())
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/storagetest"
)

// The server receives the batch as it was given, at endpoint/v1/metrics,
// compressed as configured (Content-Encoding), with the configured
// headers.
func TestDeliversTheBatchUnchanged(t *testing.T) {
	for _, c := range []configcompression.Type{configcompression.TypeGzip, configcompression.TypeZstd, "none"} {
		t.Run(string(c), func(t *testing.T) {
			srv := newServer(t, nil)
			cfg := testConfig(srv.url + "/api/v1/otlp/")
			cfg.Compression = c
			cfg.Headers.Set("x-scope-orgid", configopaque.String("tenant-1"))
			e, _ := start(t, cfg, componenttest.NewNopHost())
			defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
			want := batch(7, 300)
			require.NoError(t, e.ConsumeMetrics(context.Background(), want))
			waitFor(t, "the batch", func() bool { return len(srv.accepted()) == 1 })
			got := srv.accepted()[0]
			assert.Equal(t, jsonOf(t, want), jsonOf(t, got.md))
			assert.Equal(t, "/api/v1/otlp/v1/metrics", got.path)
			assert.Equal(t, strings.TrimPrefix(string(c), "none"), got.encoding)
			assert.Equal(t, "tenant-1", got.header.Get("x-scope-orgid"))
			bi := settings().BuildInfo
			assert.Equal(t, bi.Command+"/"+bi.Version+" ("+runtime.GOOS+"/"+runtime.GOARCH+")", got.header.Get("User-Agent"))
		})
	}
}

// metrics_endpoint is the URL as it is.
func TestMetricsEndpoint(t *testing.T) {
	srv := newServer(t, nil)
	cfg := testConfig("")
	cfg.MetricsEndpoint = srv.url + "/custom/path"
	e, _ := start(t, cfg, componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 2)))
	waitFor(t, "the batch", func() bool { return len(srv.accepted()) == 1 })
	assert.Equal(t, "/custom/path", srv.accepted()[0].path)
}

// 503, 502, 504 and 429 are retried until the server takes the batch; 400
// and 404 drop it (permanent) and the next batch goes on.
func TestRetryableAndPermanentStatuses(t *testing.T) {
	answers := map[int]int{0: 503, 1: 502, 2: 504, 3: 429, 5: 400, 7: 404}
	srv := newServer(t, func(n int, w http.ResponseWriter) bool {
		if code, ok := answers[n]; ok {
			http.Error(w, "test says no", code)
			return false
		}
		return true
	})
	e, logs := start(t, testConfig(srv.url), componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 2)))
	waitFor(t, "batch 1 after 503, 502, 504, 429", func() bool { return len(srv.accepted()) == 1 })
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(2, 2))) // 400
	waitFor(t, "the 400", func() bool { return srv.requests() == 6 })
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(3, 2)))
	waitFor(t, "batch 3", func() bool { return len(srv.accepted()) == 2 })
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(4, 2))) // 404
	waitFor(t, "the 404", func() bool { return srv.requests() == 8 })
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(5, 2)))
	waitFor(t, "batch 5", func() bool { return len(srv.accepted()) == 3 })
	require.Equal(t, []string{"1", "3", "5"}, ids(srv.accepted()))
	require.Equal(t, 8+1, srv.requests())
	// Each cause once a minute, with the totals; exporterhelper's own line
	// once a minute whatever the cause.
	waitFor(t, "the drops logged", func() bool { return logs.FilterMessageSnippet("request rejected by the endpoint").Len() == 2 })
	rej := logs.FilterMessageSnippet("request rejected by the endpoint").All()
	assert.Equal(t, "http 400", rej[0].ContextMap()["cause"])
	assert.Contains(t, rej[0].ContextMap()["error"], "400 Bad Request: test says no")
	assert.Equal(t, "http 404", rej[1].ContextMap()["cause"])
	assert.Equal(t, int64(2), rej[1].ContextMap()["rejected_requests_total"])
	assert.Equal(t, 1, logs.FilterMessageSnippet("Exporting failed. Dropping data.").Len())
	retries := logs.FilterMessageSnippet("failed; the batch waits in the queue").All()
	require.Len(t, retries, 4, "503, 502, 504 and 429: one line per cause")
	assert.Equal(t, "http 503", retries[0].ContextMap()["cause"])
	assert.Equal(t, 1, logs.FilterMessageSnippet("delivers again").Len())
}

// The answer to a failed request is classified by its status and
// Retry-After (seconds or a date), and its message is the Status a
// protobuf answer carries, or the text.
func TestClassify(t *testing.T) {
	now := time.Now()
	status, err := proto.Marshal(&spb.Status{Code: 8, Message: "too many points"})
	require.NoError(t, err)
	for name, c := range map[string]struct {
		code       int
		header     http.Header
		body       []byte
		permanent  bool
		throttle   string
		wantInText string
	}{
		"503":                       {code: 503, body: []byte("down\n"), wantInText: "503 Service Unavailable: down"},
		"503 retry-after 3":         {code: 503, header: http.Header{"Retry-After": {"3"}}, throttle: "3s"},
		"429 retry-after date":      {code: 429, header: http.Header{"Retry-After": {now.Add(90 * time.Second).UTC().Format(http.TimeFormat)}}, throttle: "1m2"},
		"429 retry-after garbage":   {code: 429, header: http.Header{"Retry-After": {"soon"}}},
		"429 protobuf status":       {code: 429, header: http.Header{"Content-Type": {"application/x-protobuf"}}, body: status, wantInText: ": too many points"},
		"429 undecodable status":    {code: 429, header: http.Header{"Content-Type": {"application/x-protobuf"}}, body: []byte{0xff, 0xff}, wantInText: "(a Status of 2 bytes that does not decode"},
		"no message":                {code: 502, wantInText: "answered 502 Bad Gateway"},
		"502":                       {code: 502},
		"504":                       {code: 504},
		"502 retry-after not taken": {code: 502, header: http.Header{"Retry-After": {"3"}}},
		"400":                       {code: 400, permanent: true},
		"401":                       {code: 401, permanent: true},
		"404":                       {code: 404, permanent: true},
		"413":                       {code: 413, permanent: true},
		"500":                       {code: 500, permanent: true},
	} {
		resp := &http.Response{StatusCode: c.code, Status: http.StatusText(c.code), Header: c.header}
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		resp.Status = strings.TrimSpace(strings.Join([]string{itoa(c.code), http.StatusText(c.code)}, " "))
		got := classify(resp, c.body, "http://x/v1/metrics", false)
		require.Error(t, got, name)
		assert.Equal(t, c.permanent, isPermanent(got), name)
		if c.throttle != "" {
			assert.True(t, strings.HasPrefix(pushqueue.RetryAfter(got).String(), c.throttle), "%s: %s", name, pushqueue.RetryAfter(got))
		} else {
			assert.Zero(t, pushqueue.RetryAfter(got), name)
		}
		assert.Contains(t, got.Error(), c.wantInText, name)
	}
}

func TestPartialSuccessIsLogged(t *testing.T) {
	srv := newServer(t, func(_ int, w http.ResponseWriter) bool {
		r := pmetricotlp.NewExportResponse()
		r.PartialSuccess().SetRejectedDataPoints(2)
		r.PartialSuccess().SetErrorMessage("2 points too old")
		b, _ := r.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
		return true
	})
	e, logs := start(t, testConfig(srv.url), componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 5)))
	waitFor(t, "the warning", func() bool { return logs.FilterMessage("Partial success response").Len() == 1 })
	entry := logs.FilterMessage("Partial success response").All()[0]
	assert.Equal(t, int64(2), entry.ContextMap()["dropped_data_points"])
	assert.Equal(t, "2 points too old", entry.ContextMap()["message"])
}

// A persistent queue filled while the server answers 503, with
// merge_window joining the batches, is delivered whole and unchanged by
// the next process once the server is up.
func TestPersistentQueueSurvivesRestart(t *testing.T) {
	var mu sync.Mutex
	down := true
	srv := newServer(t, func(_ int, w http.ResponseWriter) bool {
		mu.Lock()
		defer mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
		return !down
	})
	sid := component.MustNewID("memstorage")
	host := storagetest.NewMemStorage().Host(sid)
	cfg := testConfig(srv.url)
	cfg.QueueConfig.Get().StorageID = &sid
	cfg.MergeWindow = 20 * time.Millisecond
	e, _ := start(t, cfg, host)
	want := []pmetric.Metrics{batch(0, 3), batch(1, 4), batch(2, 5)}
	for _, md := range want {
		require.NoError(t, e.ConsumeMetrics(context.Background(), md))
	}
	waitFor(t, "a refused attempt", func() bool { return srv.requests() > 0 })
	require.NoError(t, e.Shutdown(context.Background()))
	require.Empty(t, srv.accepted())

	mu.Lock()
	down = false
	mu.Unlock()
	e, _ = start(t, cfg, host)
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	waitFor(t, "the stored request", func() bool { return len(srv.accepted()) == 1 })
	joined := pmetric.NewMetrics()
	for _, md := range want {
		md.ResourceMetrics().MoveAndAppendTo(joined.ResourceMetrics())
	}
	assert.Equal(t, jsonOf(t, joined), jsonOf(t, srv.accepted()[0].md))
}

// A request stored with another compression than the sender's (a changed
// configuration) arrives whole, with the sender's Content-Encoding.
func TestStoredWithOtherCompressionDelivered(t *testing.T) {
	md := batch(5, 200)
	for name, c := range map[string]struct {
		storedWith string
		sender     configcompression.Type
	}{
		"gzip stored, zstd sender":   {storedWith: "gzip", sender: configcompression.TypeZstd},
		"zstd stored, none sender":   {storedWith: "zstd", sender: "none"},
		"none stored, gzip sender":   {storedWith: "", sender: configcompression.TypeGzip},
		"snappy stored, gzip sender": {storedWith: "snappy", sender: configcompression.TypeGzip},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, nil)
			req, err := otlpqueue.Encode(md, c.storedWith)
			require.NoError(t, err)
			stored, err := otlpqueue.Encoding{}.Marshal(req)
			require.NoError(t, err)
			back, err := otlpqueue.Encoding{}.Unmarshal(stored)
			require.NoError(t, err)
			cfg := testConfig(srv.url)
			cfg.Compression = c.sender
			e := &otlpHTTPDurable{cfg: cfg, set: settings(), url: srv.url + "/v1/metrics"}
			e.compression, err = cfg.compression()
			require.NoError(t, err)
			require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
			defer func() { require.NoError(t, e.shutdown(context.Background())) }()
			require.NoError(t, e.push(context.Background(), back))
			require.Len(t, srv.accepted(), 1)
			assert.Equal(t, jsonOf(t, md), jsonOf(t, srv.accepted()[0].md))
			assert.Equal(t, e.compression, srv.accepted()[0].encoding)
		})
	}
}

// A request that does not reach a server (connection refused) is
// retried, not dropped.
func TestUnreachableIsRetryable(t *testing.T) {
	srv := newServer(t, nil)
	url := srv.url
	cfg := testConfig(url)
	e := &otlpHTTPDurable{cfg: cfg, set: settings(), url: url + "/v1/metrics", compression: "gzip"}
	require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, e.shutdown(context.Background())) }()
	req, err := otlpqueue.Encode(batch(1, 1), "gzip")
	require.NoError(t, err)
	require.NoError(t, e.push(context.Background(), req))
	e.url = "http://127.0.0.1:1/v1/metrics" // nothing listens on port 1
	err = e.push(context.Background(), req)
	require.Error(t, err)
	assert.False(t, isPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "connect")
}

// A password in the endpoint is not in the errors and logs that name it.
func TestPasswordRedacted(t *testing.T) {
	srv := newServer(t, func(_ int, w http.ResponseWriter) bool {
		http.Error(w, "no", http.StatusBadRequest)
		return false
	})
	cfg := testConfig(strings.Replace(srv.url, "http://", "http://alice:s3cret@", 1))
	e, logs := start(t, cfg, componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 1)))
	waitFor(t, "the drop", func() bool { return logs.FilterMessageSnippet("Dropping data").Len() == 1 })
	msg := logs.FilterMessageSnippet("Dropping data").All()[0].ContextMap()["error"].(string)
	assert.Contains(t, msg, "alice:xxxxx@")
	assert.NotContains(t, msg, "s3cret")
}

// A Retry-After throttles the retry through the exporterhelper: the
// second attempt waits for it, not for retry_on_failure's 10 ms.
func TestRetryAfterThrottles(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	srv := newServer(t, func(n int, w http.ResponseWriter) bool {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return false
		}
		return true
	})
	e, _ := start(t, testConfig(srv.url), componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 1)))
	waitFor(t, "the retried batch", func() bool { return len(srv.accepted()) == 1 })
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, at, 2)
	assert.GreaterOrEqual(t, at[1].Sub(at[0]), 900*time.Millisecond)
}

// retry_on_auth_errors keeps 401 and 403 retried, for a credential fix.
func TestClassifyRetriesAuthErrorsWhenAsked(t *testing.T) {
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		resp := &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{}}
		assert.True(t, isPermanent(classify(resp, nil, "http://x/v1/metrics", false)), "%d", code)
		assert.False(t, isPermanent(classify(resp, nil, "http://x/v1/metrics", true)), "%d", code)
	}
	resp := &http.Response{StatusCode: http.StatusBadRequest, Status: "400", Header: http.Header{}}
	assert.True(t, isPermanent(classify(resp, nil, "http://x/v1/metrics", true)))
}

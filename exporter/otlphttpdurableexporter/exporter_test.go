// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"
)

// received is one request as the server read it.
type received struct {
	md       pmetric.Metrics
	encoding string // Content-Encoding
	header   http.Header
	path     string
}

// server is a real OTLP/HTTP metrics endpoint on loopback that decodes
// what it is sent as an OTLP/HTTP receiver does (gzip or zstd
// Content-Encoding, protobuf). answer writes the reply to request n
// (from 0); nil answers 200 with an empty ExportMetricsServiceResponse.
type server struct {
	t      *testing.T
	url    string
	answer func(n int, w http.ResponseWriter) bool // true: accepted

	mu  sync.Mutex
	n   int
	got []received
}

func newServer(t *testing.T, answer func(n int, w http.ResponseWriter) bool) *server {
	s := &server{t: t, answer: answer}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	switch r.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	case "zstd":
		d, err := zstd.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer d.Close()
		body = d
	}
	raw, err := io.ReadAll(body)
	req := pmetricotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(raw)
	}
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP protobuf request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	s.n++
	if s.answer != nil && !s.answer(n, w) {
		return
	}
	s.got = append(s.got, received{md: req.Metrics(), encoding: r.Header.Get("Content-Encoding"), header: r.Header.Clone(), path: r.URL.Path})
	if s.answer == nil {
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := pmetricotlp.NewExportResponse().MarshalProto()
		_, _ = w.Write(b)
	}
}

func (s *server) accepted() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// ids returns the ernic.id of each resource received, in order.
func ids(got []received) []string {
	var out []string
	for _, r := range got {
		rms := r.md.ResourceMetrics()
		for i := range rms.Len() {
			v, _ := rms.At(i).Resource().Attributes().Get("ernic.id")
			out = append(out, v.Str())
		}
	}
	return out
}

func testConfig(endpoint string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = endpoint
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
	cfg.QueueConfig.Get().NumConsumers = 1
	return cfg
}

func start(t *testing.T, cfg *Config, host component.Host) (exporter.Metrics, *observer.ObservedLogs) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	return otlptest.Start(t, NewFactory(), cfg, host)
}

// The helpers the OTLP exporters' tests share (exporter/internal/otlptest).
var (
	batch   = otlptest.Batch
	jsonOf  = otlptest.JSON
	waitFor = otlptest.WaitFor
)

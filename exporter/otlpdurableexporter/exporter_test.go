// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcmd "google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/storagetest"
)

// server is a real OTLP/gRPC metrics server on loopback. answer decides the
// reply to each request (n counts from 0); what it accepted is kept.
type server struct {
	pmetricotlp.UnimplementedGRPCServer
	addr   string
	answer func(n int) (pmetricotlp.ExportResponse, error)

	mu         sync.Mutex
	n          int
	got        []pmetric.Metrics
	md         []grpcmd.MD
	compressed []bool // per accepted request: the payload came compressed
	lastIn     *stats.InPayload
}

func newServer(t *testing.T, answer func(n int) (pmetricotlp.ExportResponse, error)) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &server{addr: ln.Addr().String(), answer: answer}
	g := grpc.NewServer(grpc.StatsHandler(s))
	pmetricotlp.RegisterGRPCServer(g, s)
	go func() { _ = g.Serve(ln) }()
	t.Cleanup(g.Stop)
	return s
}

func (s *server) Export(ctx context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	s.n++
	resp, err := pmetricotlp.NewExportResponse(), error(nil)
	if s.answer != nil {
		resp, err = s.answer(n)
	}
	if err == nil {
		md, _ := grpcmd.FromIncomingContext(ctx)
		s.got = append(s.got, req.Metrics())
		s.md = append(s.md, md)
		s.compressed = append(s.compressed, s.lastIn != nil && s.lastIn.CompressedLength < s.lastIn.Length)
	}
	return resp, err
}

// HandleRPC keeps the last request's payload sizes (grpc's stats handler).
func (s *server) HandleRPC(_ context.Context, st stats.RPCStats) {
	if in, ok := st.(*stats.InPayload); ok {
		s.mu.Lock()
		s.lastIn = in
		s.mu.Unlock()
	}
}
func (*server) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (*server) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*server) HandleConn(context.Context, stats.ConnStats)                       {}

func (s *server) accepted() []pmetric.Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pmetric.Metrics(nil), s.got...)
}

// ids returns the ernic.id of each accepted batch's resource, in order.
func ids(mds []pmetric.Metrics) []string {
	var out []string
	for _, md := range mds {
		v, _ := md.ResourceMetrics().At(0).Resource().Attributes().Get("ernic.id")
		out = append(out, v.Str())
	}
	return out
}

func testConfig(endpoint string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = endpoint
	cfg.TLS.Insecure = true
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
	cfg.QueueConfig.Get().NumConsumers = 1
	return cfg
}

func start(t *testing.T, cfg *Config, host component.Host) (exporter.Metrics, *observer.ObservedLogs) {
	t.Helper()
	return otlptest.Start(t, NewFactory(), cfg, host)
}

// The server receives the batch as it was given, under each compression,
// with the configured headers; a compressed one arrives compressed.
func TestDeliversTheBatchUnchanged(t *testing.T) {
	for _, c := range []configcompression.Type{configcompression.TypeZstd, configcompression.TypeGzip, configcompression.TypeSnappy, "none"} {
		t.Run(string(c), func(t *testing.T) {
			srv := newServer(t, nil)
			cfg := testConfig(srv.addr)
			cfg.Compression = c
			cfg.Headers.Set("x-scope-orgid", configopaque.String("tenant-1"))
			e, _ := start(t, cfg, componenttest.NewNopHost())
			defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
			want := batch(7, 300)
			require.NoError(t, e.ConsumeMetrics(context.Background(), want))
			waitFor(t, "the batch", func() bool { return len(srv.accepted()) == 1 })
			require.Equal(t, jsonOf(t, want), jsonOf(t, srv.accepted()[0]))
			srv.mu.Lock()
			defer srv.mu.Unlock()
			require.Equal(t, []string{"tenant-1"}, srv.md[0].Get("x-scope-orgid"))
			require.Equal(t, c != "none", srv.compressed[0], "compressed on the wire")
		})
	}
}

// Unavailable is retried until the server takes the batch; InvalidArgument
// drops it (permanent) and the next batch goes on.
func TestRetryableAndPermanentStatuses(t *testing.T) {
	srv := newServer(t, func(n int) (pmetricotlp.ExportResponse, error) {
		switch {
		case n < 3:
			return pmetricotlp.NewExportResponse(), status.Error(codes.Unavailable, "down")
		case n == 4:
			return pmetricotlp.NewExportResponse(), status.Error(codes.InvalidArgument, "bad batch")
		}
		return pmetricotlp.NewExportResponse(), nil
	})
	e, _ := start(t, testConfig(srv.addr), componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 2)))
	waitFor(t, "batch 1 after three Unavailable", func() bool { return len(srv.accepted()) == 1 })
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(2, 2))) // refused: InvalidArgument
	waitFor(t, "the refusal", func() bool { srv.mu.Lock(); defer srv.mu.Unlock(); return srv.n == 5 })
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(3, 2)))
	waitFor(t, "batch 3", func() bool { return len(srv.accepted()) == 2 })
	require.Equal(t, []string{"1", "3"}, ids(srv.accepted()))
}

func TestPartialSuccessIsLogged(t *testing.T) {
	srv := newServer(t, func(int) (pmetricotlp.ExportResponse, error) {
		r := pmetricotlp.NewExportResponse()
		r.PartialSuccess().SetRejectedDataPoints(2)
		r.PartialSuccess().SetErrorMessage("2 points too old")
		return r, nil
	})
	e, logs := start(t, testConfig(srv.addr), componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 5)))
	waitFor(t, "the warning", func() bool { return logs.FilterMessage("Partial success response").Len() == 1 })
	entry := logs.FilterMessage("Partial success response").All()[0]
	require.Equal(t, int64(2), entry.ContextMap()["dropped_data_points"])
	require.Equal(t, "2 points too old", entry.ContextMap()["message"])
}

// downServerAndStorage returns a server that answers Unavailable until
// serverUp is called, a host with an in-memory storage extension that
// outlives exporters, and a config whose persistent queue uses it.
func downServerAndStorage(t *testing.T) (srv *server, serverUp func(), host component.Host, cfg *Config) {
	var mu sync.Mutex
	down := true
	srv = newServer(t, func(int) (pmetricotlp.ExportResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return pmetricotlp.NewExportResponse(), status.Error(codes.Unavailable, "down")
		}
		return pmetricotlp.NewExportResponse(), nil
	})
	sid := component.MustNewID("memstorage")
	host = storagetest.NewMemStorage().Host(sid)
	cfg = testConfig(srv.addr)
	cfg.QueueConfig.Get().StorageID = &sid
	serverUp = func() {
		mu.Lock()
		down = false
		mu.Unlock()
	}
	return srv, serverUp, host, cfg
}

// A persistent queue filled while the server is down is delivered, in
// order and unchanged, by the next process once the server is up.
func TestPersistentQueueSurvivesRestart(t *testing.T) {
	srv, serverUp, host, cfg := downServerAndStorage(t)
	e, _ := start(t, cfg, host)
	want := []pmetric.Metrics{batch(0, 3), batch(1, 4), batch(2, 5)}
	for _, md := range want {
		require.NoError(t, e.ConsumeMetrics(context.Background(), md))
	}
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, e.Shutdown(context.Background()))
	require.Empty(t, srv.accepted())

	serverUp()
	e, _ = start(t, cfg, host)
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	waitFor(t, "the three stored batches", func() bool { return len(srv.accepted()) == 3 })
	got := srv.accepted()
	// The batch being retried at shutdown goes back at the queue's tail
	// (exporterhelper's persistent queue); the others keep their order.
	byID := map[string]pmetric.Metrics{}
	for _, md := range got {
		byID[ids([]pmetric.Metrics{md})[0]] = md
	}
	for i, md := range want {
		require.Equal(t, jsonOf(t, md), jsonOf(t, byID[strconv.Itoa(i)]), "batch %d", i)
	}
}

// The helpers the OTLP exporters' tests share (exporter/internal/otlptest).
var (
	batch   = otlptest.Batch
	jsonOf  = otlptest.JSON
	waitFor = otlptest.WaitFor
)

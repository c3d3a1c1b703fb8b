// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Every stored compression against every configured one, random damaged
// queue entries, and a restart under another compression.

package otlpdurableexporter

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter/internal/metadata"
)

type matrixServer struct {
	pmetricotlp.UnimplementedGRPCServer
	mu       sync.Mutex
	encoding []string // grpc-encoding of each request
	respEnc  []string // grpc-encoding of each answer
	wire     []int    // compressed length of each request
	length   []int    // uncompressed length
	got      []string // json of each accepted batch
	t        *testing.T
}

func (s *matrixServer) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.mu.Lock()
	s.got = append(s.got, jsonOf(s.t, req.Metrics()))
	s.mu.Unlock()
	resp := pmetricotlp.NewExportResponse()
	resp.PartialSuccess().SetRejectedDataPoints(7)
	resp.PartialSuccess().SetErrorMessage("seven rejected")
	return resp, nil
}

func (s *matrixServer) HandleRPC(_ context.Context, st stats.RPCStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch x := st.(type) {
	case *stats.InHeader:
		s.encoding = append(s.encoding, x.Compression)
	case *stats.OutHeader:
		s.respEnc = append(s.respEnc, x.Compression)
	case *stats.InPayload:
		s.wire = append(s.wire, x.CompressedLength)
		s.length = append(s.length, x.Length)
	}
}
func (*matrixServer) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (*matrixServer) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*matrixServer) HandleConn(context.Context, stats.ConnStats)                       {}

// Every stored compression (version 1 included) with every configured one
// arrives whole, named with the configured compression in grpc-encoding,
// compressed exactly when that names a compression, and the server's
// (compressed) answer is read.
func TestCompressionMatrix(t *testing.T) {
	md := batch(7, 300)
	raw, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	v1 := append(binary.AppendUvarint([]byte{1}, 300), raw...)
	for _, stored := range []string{"v1", "", "gzip", "snappy", "zstd"} {
		for _, sender := range []configcompression.Type{"", "none", "gzip", "snappy", "zstd"} {
			t.Run(stored+"->"+string(sender), func(t *testing.T) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				s := &matrixServer{t: t}
				g := grpc.NewServer(grpc.StatsHandler(s))
				pmetricotlp.RegisterGRPCServer(g, s)
				go func() { _ = g.Serve(ln) }()
				t.Cleanup(g.Stop)

				entry := v1
				if stored != "v1" {
					req, err := otlpqueue.Encode(md, stored)
					require.NoError(t, err)
					entry, err = otlpqueue.Encoding{}.Marshal(req)
					require.NoError(t, err)
				}
				req, err := otlpqueue.Encoding{}.Unmarshal(entry)
				require.NoError(t, err)

				cfg := testConfig(ln.Addr().String())
				cfg.Compression = sender
				name, err := grpcCompression(sender)
				require.NoError(t, err)
				core, logs := observer.New(zap.WarnLevel)
				set := exportertest.NewNopSettings(metadata.Type)
				set.Logger = zap.New(core)
				e := &otlpDurable{cfg: cfg, set: set, compression: name}
				require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
				t.Cleanup(func() { _ = e.shutdown(context.Background()) })
				for range 2 { // a retry sends the same request again
					require.NoError(t, e.push(context.Background(), req))
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				require.Len(t, s.got, 2)
				for i := range 2 {
					require.Equal(t, jsonOf(t, md), s.got[i])
					require.Equal(t, len(raw), s.length[i], "uncompressed length")
					if name == "" {
						require.Contains(t, []string{"", "identity"}, s.encoding[i])
						require.Equal(t, len(raw), s.wire[i], "sent uncompressed")
					} else {
						require.Equal(t, name, s.encoding[i])
						require.Equal(t, name, s.respEnc[i], "the answer came compressed")
						require.Less(t, s.wire[i], len(raw)/2, "sent compressed once")
					}
				}
				require.Equal(t, 2, logs.FilterMessage("Partial success response").Len(), "the answer was read")
				require.Equal(t, int64(7), logs.All()[0].ContextMap()["dropped_data_points"])
			})
		}
	}
}

// Damaged queue entries are refused, never a panic.
func TestUnmarshalRandomBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		if len(b) > 0 {
			b[0] = byte(1 + r.IntN(2))
		}
		if len(b) > 1 && r.IntN(2) == 0 {
			b[1] = byte(r.IntN(8))
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("Unmarshal(%v) panicked: %v", b, p)
				}
			}()
			req, err := otlpqueue.Encoding{}.Unmarshal(b)
			if err == nil {
				require.LessOrEqual(t, req.BytesSize(), len(b))
			}
		}()
	}
}

// A persistent queue filled under one compression is delivered whole by a
// process configured with another.
func TestRestartWithOtherCompression(t *testing.T) {
	for _, c := range [][2]configcompression.Type{{"zstd", "none"}, {"none", "gzip"}, {"gzip", "snappy"}} {
		t.Run(string(c[0])+"->"+string(c[1]), func(t *testing.T) {
			srv, serverUp, host, cfg := downServerAndStorage(t)
			cfg.Compression = c[0]
			e, _ := start(t, cfg, host)
			want := []pmetric.Metrics{batch(0, 30), batch(1, 40)}
			for _, md := range want {
				require.NoError(t, e.ConsumeMetrics(context.Background(), md))
			}
			time.Sleep(50 * time.Millisecond)
			require.NoError(t, e.Shutdown(context.Background()))
			serverUp()
			cfg.Compression = c[1]
			e, _ = start(t, cfg, host)
			defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
			waitFor(t, "both batches", func() bool { return len(srv.accepted()) == 2 })
			got := map[string]string{}
			for _, md := range srv.accepted() {
				got[ids([]pmetric.Metrics{md})[0]] = jsonOf(t, md)
			}
			require.Equal(t, map[string]string{"0": jsonOf(t, want[0]), "1": jsonOf(t, want[1])}, got)
		})
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushtest"
)

// grpcEndpoint is pushtest's endpoint over OTLP/gRPC: an HTTP status is
// answered with the code otlp_grpc's table maps it from.
type grpcEndpoint struct {
	pmetricotlp.UnimplementedGRPCServer
	pushtest.Record
	addr string
}

func newGRPCEndpoint(t *testing.T) *grpcEndpoint {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	e := &grpcEndpoint{addr: ln.Addr().String()}
	g := grpc.NewServer()
	pmetricotlp.RegisterGRPCServer(g, e)
	go func() { _ = g.Serve(ln) }()
	t.Cleanup(g.Stop)
	return e
}

func (e *grpcEndpoint) URL() string { return e.addr }

var grpcCodes = map[int]codes.Code{
	http.StatusBadRequest:         codes.InvalidArgument,
	http.StatusTooManyRequests:    codes.ResourceExhausted,
	http.StatusServiceUnavailable: codes.Unavailable,
}

func (e *grpcEndpoint) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	a := e.Attempt()
	time.Sleep(a.Delay)
	switch {
	case a.Down:
		return pmetricotlp.NewExportResponse(), status.Error(codes.Unavailable, "test endpoint is down")
	case a.Status != 0:
		st := status.New(grpcCodes[a.Status], "test endpoint answers "+http.StatusText(a.Status))
		if s, err := strconv.Atoi(a.RetryAfter); err == nil {
			st, _ = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(s) * time.Second)})
		} else if a.Status == http.StatusTooManyRequests {
			// otlp_grpc's table: ResourceExhausted is retried only with RetryInfo.
			st, _ = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(0)})
		}
		return pmetricotlp.NewExportResponse(), st.Err()
	}
	batches, points := pushtest.OTLPBatches(req.Metrics())
	e.Take(batches, points)
	return pmetricotlp.NewExportResponse(), nil
}

// The push policy, as the other push exporters follow it.
func TestPushPolicy(t *testing.T) {
	pushtest.RunPolicy(t, func(t *testing.T) pushtest.Target {
		ep := newGRPCEndpoint(t)
		return pushtest.Target{Endpoint: ep, Rejected: "grpc_invalid_argument", Start: func(t *testing.T, q exporterhelper.QueueBatchConfig, retry configretry.BackOffConfig, host component.Host) (exporter.Metrics, *observer.ObservedLogs) {
			cfg := testConfig(ep.URL())
			cfg.QueueConfig = configoptional.Some(q)
			cfg.RetryConfig = retry
			return start(t, cfg, host)
		}}
	})
}

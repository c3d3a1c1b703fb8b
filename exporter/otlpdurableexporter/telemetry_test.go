// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	grpcmd "google.golang.org/grpc/metadata"

	"github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter/internal/metadata"
)

// The exporter's own telemetry counts the points sent and names the server,
// as otlp_grpc's does.
func TestTelemetryCountsPointsAndNamesServer(t *testing.T) {
	srv := newServer(t, nil)
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	e, err := createMetrics(context.Background(), set, testConfig(srv.addr))
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch(1, 5)))
	waitFor(t, "the batch", func() bool { return len(srv.accepted()) == 1 })

	host, port, err := net.SplitHostPort(srv.addr)
	require.NoError(t, err)
	wantPort, err := strconv.Atoi(port)
	require.NoError(t, err)
	waitFor(t, "otelcol_exporter_sent_metric_points", func() bool {
		m, err := tel.GetMetric("otelcol_exporter_sent_metric_points")
		if err != nil {
			return false
		}
		sum := m.Data.(metricdata.Sum[int64])
		if len(sum.DataPoints) != 1 || sum.DataPoints[0].Value != 5 {
			return false
		}
		attrs := sum.DataPoints[0].Attributes
		addr, _ := attrs.Value("server.address")
		p, _ := attrs.Value("server.port")
		return addr == attribute.StringValue(host) && p == attribute.IntValue(wantPort)
	})
}

// Metadata already on the request's context goes out with it; a configured
// header is added where the context has none.
func TestOutgoingMetadataKept(t *testing.T) {
	srv := newServer(t, nil)
	cfg := testConfig(srv.addr)
	cfg.Headers.Set("x-scope-orgid", "tenant-1")
	e, _ := start(t, cfg, componenttest.NewNopHost())
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	ctx := grpcmd.AppendToOutgoingContext(context.Background(), "x-extra", "1")
	require.NoError(t, e.ConsumeMetrics(ctx, batch(1, 2)))
	waitFor(t, "the batch", func() bool { return len(srv.accepted()) == 1 })
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Equal(t, []string{"1"}, srv.md[0].Get("x-extra"))
	require.Equal(t, []string{"tenant-1"}, srv.md[0].Get("x-scope-orgid"))
}

// The default config is valid with the queue batcher's feature gate on
// (its default queue config then has a batcher, which Validate refuses).
func TestDefaultConfigValidUnderQueueBatchGate(t *testing.T) {
	const gate = "pkg.exporterhelper.queueBatchEnabled"
	require.NoError(t, featuregate.GlobalRegistry().Set(gate, true))
	defer func() { require.NoError(t, featuregate.GlobalRegistry().Set(gate, false)) }()
	require.True(t, exporterhelper.NewDefaultQueueConfig().Batch.HasValue(), "the gate gives the default queue a batcher")
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint = "localhost:4317"
	require.NoError(t, cfg.Validate())
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlptest holds test helpers the OTLP exporters, otlpqueue and
// remote_write's translator share.
package otlptest // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Batch is gauge ernic.test: points points of value id, qp 0..points-1, ernic.id=id.
func Batch(id, points int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("ernic.id", strconv.Itoa(id))
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("ernic.test")
	m.SetUnit("{packet}")
	dps := m.SetEmptyGauge().DataPoints()
	for q := range points {
		dp := dps.AppendEmpty()
		dp.Attributes().PutStr("qp", strconv.Itoa(q))
		dp.SetIntValue(int64(id))
		dp.SetTimestamp(1_700_000_000_000_000_000)
	}
	return md
}

// JSON is md as OTLP JSON, to compare two batches whole.
func JSON(t *testing.T, md pmetric.Metrics) string {
	t.Helper()
	b, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
	require.NoError(t, err)
	return string(b)
}

// WaitFor fails t unless cond holds within 10 s (checked every 5 ms).
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, "waiting for %s", what)
}

// Settings are an exporter's of type typ, its logs observed at info level.
func Settings(typ component.Type) (exporter.Settings, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	set := exportertest.NewNopSettings(typ)
	set.Logger = zap.New(core)
	return set, logs
}

// Start creates an exporter of factory f with cfg, its logs observed at
// info level, and starts it on host.
func Start(t *testing.T, f exporter.Factory, cfg component.Config, host component.Host) (exporter.Metrics, *observer.ObservedLogs) {
	t.Helper()
	set, logs := Settings(f.Type())
	e, err := f.CreateMetrics(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), host))
	return e, logs
}

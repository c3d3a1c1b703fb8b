// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"
)

// recorder is a push that takes every request: it keeps each as the
// server would see it, decompressed and decoded, and its compression.
type recorder struct {
	t  *testing.T
	mu sync.Mutex
	// got holds the decoded requests, in order; names their compression.
	got   []pmetric.Metrics
	names []string
}

func (r *recorder) push(_ context.Context, req *Request) error {
	raw, err := Decompress(req.Compression, req.Body)
	require.NoError(r.t, err)
	decoded := pmetricotlp.NewExportRequest()
	require.NoError(r.t, decoded.UnmarshalProto(raw))
	require.Equal(r.t, decoded.Metrics().DataPointCount(), req.Points)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, decoded.Metrics())
	r.names = append(r.names, req.Compression)
	return nil
}

func (r *recorder) accepted() []pmetric.Metrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pmetric.Metrics(nil), r.got...)
}

// testSettings are Settings with an in-memory queue of one consumer, as
// the shipped configs', pushing into a new recorder.
func testSettings(t *testing.T, compression string) (Settings, *recorder) {
	rec := &recorder{t: t}
	q := exporterhelper.NewDefaultQueueConfig()
	q.NumConsumers = 1
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	return Settings{Compression: compression, Queue: configoptional.Some(q), Push: rec.push}, rec
}

// start returns the exporter of s, started.
func start(t *testing.T, s Settings) exporter.Metrics {
	t.Helper()
	e, err := NewMetrics(context.Background(), exportertestSettings(), s)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	return e
}

func exportertestSettings() exporter.Settings {
	return exportertest.NewNopSettings(component.MustNewType("otlp_test"))
}

// The helpers the OTLP exporters' tests share (exporter/internal/otlptest).
var (
	batch   = otlptest.Batch
	jsonOf  = otlptest.JSON
	waitFor = otlptest.WaitFor
)

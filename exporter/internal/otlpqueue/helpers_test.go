// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
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
	return Settings{Name: "otlp_test", Compression: compression, Queue: configoptional.Some(q), Push: rec.push}, rec
}

// start returns the exporter of s, started.
func start(t *testing.T, s Settings) exporter.Metrics {
	t.Helper()
	e, err := NewMetrics(context.Background(), exportertestSettings(), s)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	return e
}

// batch is one gauge "ernic.test" with points data points of value id,
// on a resource with ernic.id=id.
func batch(id, points int) pmetric.Metrics {
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

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, "waiting for %s", what)
}

func jsonOf(t *testing.T, md pmetric.Metrics) string {
	b, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
	require.NoError(t, err)
	return string(b)
}

func exportertestSettings() exporter.Settings {
	return exportertest.NewNopSettings(component.MustNewType("otlp_test"))
}

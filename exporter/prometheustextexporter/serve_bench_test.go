// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// hostBatch is a host of the bench's 16×64 kind: instances resources
// (ernic.id, role) of ten QP counters over qps QPs each, with values of
// a few digits to ten.
func hostBatch(instances, qps int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for i := range instances {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("ernic.id", strconv.Itoa(i))
		rm.Resource().Attributes().PutStr("role", "server")
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for c := range 10 {
			m := ms.AppendEmpty()
			m.SetName("ernic.qp.counter" + strconv.Itoa(c))
			m.SetUnit("{operation}")
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			for q := range qps {
				dp := s.DataPoints().AppendEmpty()
				dp.SetIntValue(int64(q*c+i) * 982451653 % 10_000_000_000)
				dp.Attributes().PutStr("qp", strconv.Itoa(q))
			}
		}
	}
	return md
}

// BenchmarkServe: one GET of the endpoint holding 16 instances × 64 QPs ×
// 10 counters (10,240 series), as Prometheus asks for it (gzip) and
// without compression; per series, and the bytes sent per series.
func BenchmarkServe(b *testing.B) {
	const instances, qps = 16, 64
	e := newExporter(newTestExporter(&testing.T{}).set, createDefaultConfig().(*Config))
	require.NoError(b, e.ConsumeMetrics(context.Background(), hostBatch(instances, qps)))
	series := float64(instances * qps * 10)
	for _, enc := range []string{"gzip", "identity"} {
		b.Run(enc, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", enc)
			var sent int
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				sent = rec.Body.Len()
			}
			if sent < 10_000 {
				b.Fatalf("a GET sent %d bytes", sent)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/series, "ns/series")
			b.ReportMetric(float64(sent)/series, "bytes/series")
		})
	}
}

// TestGzipWritersReused: GETs in a row, gzip and not, each get the whole
// text: a writer taken back from an earlier GET starts a new stream.
func TestGzipWritersReused(t *testing.T) {
	e := newTestExporter(t)
	require.NoError(t, e.ConsumeMetrics(context.Background(), hostBatch(2, 3)))
	want, resp := get(t, e, false)
	require.Empty(t, resp.Header.Get("Content-Encoding"))
	require.Equal(t, 2*3*10, strings.Count(want, "\nernic_qp_counter"), want)
	for i := range 4 {
		got, resp := get(t, e, i%3 != 2)
		require.Equal(t, want, got, "GET %d", i)
		if i%3 != 2 {
			require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
		}
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter/internal/metadata"
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
	e := newExporter(exportertest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
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

// TestGzip: with no batch, the gzip stream is whole and empty; a GET of
// several 64 KiB writes decodes, trailer and all (get fails without it), to
// the plain text, compressed; and a client that goes away is not written to
// again.
func TestGzip(t *testing.T) {
	e := newTestExporter(t)
	got, resp := get(t, e, true)
	require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
	require.Equal(t, "Accept-Encoding", resp.Header.Get("Vary"))
	require.Empty(t, got)

	require.NoError(t, e.ConsumeMetrics(context.Background(), hostBatch(4, 64)))
	want, _ := get(t, e, false)
	require.Equal(t, 4*64*10, strings.Count(want, "\nernic_qp_counter"))
	require.Greater(t, len(want), 2*64<<10)
	got, _ = get(t, e, true)
	require.Equal(t, want, got)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	zipped := rec.Body.Bytes()
	require.Less(t, len(zipped)*5, len(want))
	require.Equal(t, []byte{0, 0, 0, 0}, zipped[4:8]) // MTIME: none

	// The compressed bytes reach the connection 64 KiB at a time.
	w := &brokenWriter{ResponseRecorder: httptest.NewRecorder(), room: 1 << 30}
	e.ServeHTTP(w, req)
	require.Equal(t, zipped, w.Body.Bytes())
	require.Equal(t, 1+(len(zipped)-1)/(64<<10), w.writes)

	w = &brokenWriter{ResponseRecorder: httptest.NewRecorder(), room: 4 << 10}
	e.ServeHTTP(w, req)
	require.Equal(t, 1, w.failed)
}

// brokenWriter takes room bytes, then fails every write, counting them;
// writes counts every write.
type brokenWriter struct {
	*httptest.ResponseRecorder
	room, failed, writes int
}

func (w *brokenWriter) Write(p []byte) (int, error) {
	w.writes++
	if len(p) > w.room {
		w.room = -1 // gone for good
		w.failed++
		return 0, io.ErrClosedPipe
	}
	w.room -= len(p)
	return w.ResponseRecorder.Write(p)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter/internal/metadata"
)

// batch builds one resource (resource attribute host=<host>) with the kinds
// of metrics the text format carries and the ones it leaves out.
func batch(host string, bytesSent int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	if host != "" {
		rm.Resource().Attributes().PutStr("host", host)
	}
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()

	m := ms.AppendEmpty()
	m.SetName("ernic.rdma.bytes.sent")
	m.SetUnit("By")
	m.SetDescription("RDMA payload bytes sent.\nSecond line, with a \\.")
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := s.DataPoints().AppendEmpty()
	dp.SetIntValue(bytesSent)
	dp.Attributes().PutStr("ernic.id", "2")
	dp.Attributes().PutStr("role", `wor"ker`+"\n")
	stale := s.DataPoints().AppendEmpty()
	stale.SetIntValue(7)
	stale.Attributes().PutStr("ernic.id", "3")
	stale.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))

	m = ms.AppendEmpty()
	m.SetName("ernic.instance.uptime")
	m.SetUnit("s")
	g := m.SetEmptyGauge()
	for i, v := range []float64{12.5, math.NaN(), math.Inf(1), 1e21} {
		dp := g.DataPoints().AppendEmpty()
		dp.SetDoubleValue(v)
		dp.Attributes().PutInt("n", int64(i))
		dp.Attributes().PutStr("bad", "a\xffb")
	}

	m = ms.AppendEmpty()
	m.SetName("ernic.qp.count")
	nm := m.SetEmptySum() // not monotonic: a gauge
	nm.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	nm.DataPoints().AppendEmpty().SetIntValue(4)

	m = ms.AppendEmpty()
	m.SetName("ernic.histogram")
	m.SetEmptyHistogram().DataPoints().AppendEmpty().SetCount(3)

	m = ms.AppendEmpty()
	m.SetName("ernic.only.stale")
	st := m.SetEmptyGauge().DataPoints().AppendEmpty()
	st.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
	return md
}

func newTestExporter(t *testing.T) *textExporter {
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	return newExporter(exportertest.NewNopSettings(metadata.Type), cfg)
}

func get(t *testing.T, e *textExporter, gz bool) (string, *http.Response) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if gz {
		req.Header.Set("Accept-Encoding", "br;q=1.0, gzip;q=0.8")
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	resp := rec.Result()
	body := resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		require.NoError(t, err)
		body = zr
	}
	b, err := io.ReadAll(body)
	require.NoError(t, err)
	return string(b), resp
}

const want = `# HELP ernic_instance_uptime_seconds 
# TYPE ernic_instance_uptime_seconds gauge
ernic_instance_uptime_seconds{n="0",bad="a\uFFFDb"} 12.5
ernic_instance_uptime_seconds{n="1",bad="a\uFFFDb"} NaN
ernic_instance_uptime_seconds{n="2",bad="a\uFFFDb"} +Inf
ernic_instance_uptime_seconds{n="3",bad="a\uFFFDb"} 1e+21
# TYPE ernic_qp_count gauge
ernic_qp_count 4
# HELP ernic_rdma_bytes_sent_total RDMA payload bytes sent.\nSecond line, with a \\.
# TYPE ernic_rdma_bytes_sent_total counter
ernic_rdma_bytes_sent_total{ernic_id="2",role="wor\"ker\n"} 9007199254740993
`

func TestTextFormat(t *testing.T) {
	e := newTestExporter(t)
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch("", 1<<53+1)))
	got, resp := get(t, e, false)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", resp.Header.Get("Content-Type"))
	exp := strings.ReplaceAll(want, `\uFFFD`, "\uFFFD")
	exp = strings.Replace(exp, "# HELP ernic_instance_uptime_seconds \n", "", 1)
	assert.Equal(t, exp, got)

	// Prometheus' own parser reads it, the integer above 2^53 too.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(got))
	require.NoError(t, err)
	assert.Len(t, fams, 3)
	c := fams["ernic_rdma_bytes_sent_total"]
	require.NotNil(t, c)
	assert.Equal(t, float64(1<<53+1), c.Metric[0].GetCounter().GetValue())

	gzipped, resp := get(t, e, true)
	assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
	assert.Equal(t, got, gzipped)
}

// The latest batch of a resource replaces the one before; another resource
// is served beside it; a resource whose batches stop goes after
// metric_expiration.
func TestLatestBatchPerResource(t *testing.T) {
	e := newTestExporter(t)
	now := time.Unix(1_700_000_000, 0)
	e.now = func() time.Time { return now }
	ctx := context.Background()
	require.NoError(t, e.ConsumeMetrics(ctx, batch("a", 1)))
	require.NoError(t, e.ConsumeMetrics(ctx, batch("b", 20)))
	now = now.Add(40 * time.Second)
	require.NoError(t, e.ConsumeMetrics(ctx, batch("a", 2)))
	values := func() []string {
		got, _ := get(t, e, false)
		var out []string
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, "ernic_rdma_bytes_sent_total") {
				out = append(out, l[strings.LastIndexByte(l, ' ')+1:])
			}
		}
		return out
	}
	assert.Equal(t, []string{"20", "2"}, values(), "b, then a's latest (oldest resource first)")
	now = now.Add(30 * time.Second) // b is 70s old, a 30s
	assert.Equal(t, []string{"2"}, values())
	got, _ := get(t, e, false)
	assert.Equal(t, 1, strings.Count(got, "# TYPE ernic_rdma_bytes_sent_total"), "one family header for all resources")
}

func TestEscaping(t *testing.T) {
	for in, out := range map[string]string{
		"plain":   "plain",
		`a\b`:     `a\\b`,
		"a\nb":    `a\nb`,
		`"q"`:     `\"q\"`,
		"x\xffy":  "x\uFFFDy",
		"":        "",
		"ünï\\\n": `ünï\\\n`,
	} {
		assert.Equal(t, out, string(appendEscaped(nil, in, true)), "%q", in)
	}
	assert.Equal(t, `say "hi"\n`, string(appendEscaped(nil, "say \"hi\"\n", false)), "HELP keeps quotes")
}

// The endpoint serves /metrics only.
func TestEndpointPaths(t *testing.T) {
	e := newTestExporter(t)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch("", 5)))
	base := "http://" + e.addr.String()
	for path, code := range map[string]int{"/metrics": 200, "/": 404, "/metrics/x": 404, "/debug/pprof/": 404} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, code, resp.StatusCode, path)
		if code == 200 {
			assert.Contains(t, string(b), "ernic_rdma_bytes_sent_total")
		}
	}
}

// BenchmarkRender: rendering a batch of 100,000 QP series of one instance
// (ernic.id and role resource attributes, promoted), per series.
func BenchmarkRender(b *testing.B) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("ernic.id", "12")
	rm.Resource().Attributes().PutStr("role", "worker")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	m := ms.AppendEmpty()
	m.SetName("ernic.qp.bytes.sent")
	m.SetUnit("By")
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range 100_000 {
		dp := s.DataPoints().AppendEmpty()
		dp.SetIntValue(int64(i) * 1234567)
		dp.Attributes().PutStr("qp", strconv.Itoa(i))
	}
	n := newNamer()
	b.ReportAllocs()
	b.ResetTimer()
	var r *rendered
	for range b.N {
		r = n.render(rm, true, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/series")
	b.ReportMetric(float64(len(r.buf))/100_000, "bytes/series")
	if got := linesOf(b, r); strings.Count(got, "\n") != 100_000 || !strings.HasPrefix(got, `ernic_qp_bytes_sent_total{ernic_id="12",role="worker",qp="0"} 0`) {
		b.Fatalf("rendered %d lines, the first %q", strings.Count(got, "\n"), got[:min(len(got), 80)])
	}
}

// BenchmarkRenderHost: rendering the batches of a host of the bench's 16×64
// kind (hostBatch: 16 resources of ten QP counters over 64 QPs), as the
// receiver hands them on, one resource at a time; per series. "new"
// renders each batch anew, "reused" into the resource's batch before the
// last, as ConsumeMetrics does when no GET writes that one.
func BenchmarkRenderHost(b *testing.B) {
	const instances, qps = 16, 64
	rms := hostBatch(instances, qps).ResourceMetrics()
	for _, reuse := range []bool{false, true} {
		name := "new"
		if reuse {
			name = "reused"
		}
		b.Run(name, func(b *testing.B) {
			n := newNamer()
			last, spare := make([]*rendered, rms.Len()), make([]*rendered, rms.Len())
			b.ReportAllocs()
			var lines int
			for b.Loop() {
				lines = 0
				for i := range rms.Len() {
					var into *rendered
					if reuse {
						into = spare[i]
					}
					r := n.render(rms.At(i), true, into)
					spare[i], last[i] = last[i], r
					lines += bytes.Count(r.buf, []byte{'\n'})
				}
			}
			if want := instances * qps * 10; lines != want {
				b.Fatalf("rendered %d lines, want %d", lines, want)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/series")
		})
	}
}

// linesOf returns the series lines of r as a GET writes them.
func linesOf(tb testing.TB, r *rendered) string {
	tb.Helper()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	for i := range r.fams {
		require.NoError(tb, r.fams[i].writeTo(w, r))
	}
	require.NoError(tb, w.Flush())
	return out.String()
}

// Resource attributes become labels of every series, before the point's
// own; a key both have takes the resource's value; a resource attribute
// whose label name collides with a point attribute's joins the values; with
// resource_to_telemetry_conversion off, the resource is not in the labels.
func TestResourceToTelemetry(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("ernic.id", "7")
	rm.Resource().Attributes().PutStr("role", "worker")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("ernic.qp.count")
	g := m.SetEmptyGauge()
	dp := g.DataPoints().AppendEmpty()
	dp.SetIntValue(3)
	dp.Attributes().PutStr("qp", "11")
	dp.Attributes().PutStr("role", "manager")
	dp = g.DataPoints().AppendEmpty()
	dp.SetIntValue(4)
	dp.Attributes().PutStr("ernic_id", "x")

	n := newNamer()
	lines := func(promote bool) string {
		r := n.render(md.ResourceMetrics().At(0), promote, nil)
		return linesOf(t, r)
	}
	assert.Equal(t, `ernic_qp_count{ernic_id="7",role="worker",qp="11"} 3
ernic_qp_count{ernic_id="7;x",role="worker"} 4
`, lines(true))
	assert.Equal(t, `ernic_qp_count{qp="11",role="manager"} 3
ernic_qp_count{ernic_id="x"} 4
`, lines(false))
	assert.True(t, createDefaultConfig().(*Config).ResourceToTelemetryConversion.Enabled, "on by default")
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	prw "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/prometheusremotewrite"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
)

// receiverLike is a batch shaped like the ernic receiver's: counters and
// gauges, int and double, QP points with three attributes, an empty
// attribute value, a staleness marker, two resources (one with service
// attributes), and what the translation leaves out (a delta sum, a
// histogram).
func receiverLike(qps int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 123_000_000))
	for r := range 2 {
		rm := md.ResourceMetrics().AppendEmpty()
		if r == 1 {
			rm.Resource().Attributes().PutStr("service.name", "otelcol-ernic")
			rm.Resource().Attributes().PutStr("service.namespace", "gpu")
			rm.Resource().Attributes().PutStr("service.instance.id", "node-17")
		}
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		c := ms.AppendEmpty()
		c.SetName("ernic.qp.bytes.sent")
		c.SetUnit("By")
		sum := c.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for q := range qps {
			dp := sum.DataPoints().AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(q*1000 + r))
			dp.Attributes().PutStr("ernic.id", fmt.Sprint(2+q%4))
			dp.Attributes().PutStr("role", "worker")
			dp.Attributes().PutStr("qp", fmt.Sprint(q))
		}
		stale := sum.DataPoints().AppendEmpty()
		stale.SetTimestamp(ts)
		stale.Attributes().PutStr("ernic.id", "9")
		stale.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))

		g := ms.AppendEmpty()
		g.SetName("ernic.vm.attached")
		gauge := g.SetEmptyGauge()
		for i, vm := range []string{"", "train-a"} {
			dp := gauge.DataPoints().AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(i))
			dp.Attributes().PutStr("ernic.id", fmt.Sprint(i+1))
			dp.Attributes().PutStr("vm_name", vm)
		}
		u := ms.AppendEmpty()
		u.SetName("ernic.instance.uptime")
		u.SetUnit("s")
		dp := u.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(12.25)
		q := ms.AppendEmpty()
		q.SetName("ernic.qp.count")
		nm := q.SetEmptySum()
		nm.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		nm.DataPoints().AppendEmpty().SetIntValue(4)
		nm.DataPoints().At(0).SetTimestamp(ts)

		d := ms.AppendEmpty()
		d.SetName("ernic.delta")
		ds := d.SetEmptySum()
		ds.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		ds.DataPoints().AppendEmpty().SetIntValue(1)
		h := ms.AppendEmpty()
		h.SetName("ernic.histogram")
		h.SetEmptyHistogram().DataPoints().AppendEmpty().SetCount(2)
	}
	return md
}

// forEachSeries calls fn with every series of payloads (snappy-compressed
// WriteRequests), in order.
func forEachSeries(t *testing.T, payloads [][]byte, fn func(prompb.TimeSeries)) {
	for _, p := range payloads {
		raw, err := snappy.Decode(nil, p)
		require.NoError(t, err)
		var wr prompb.WriteRequest
		require.NoError(t, wr.Unmarshal(raw))
		for _, ts := range wr.Timeseries {
			fn(ts)
		}
	}
}

// decoded maps each series (its labels as text) to its samples.
func decoded(t *testing.T, payloads [][]byte) map[string][]prompb.Sample {
	out := map[string][]prompb.Sample{}
	forEachSeries(t, payloads, func(ts prompb.TimeSeries) {
		require.True(t, slices.IsSortedFunc(ts.Labels, cmpLabel), "labels sorted: %v", ts.Labels)
		out[labelsText(ts.Labels)] = ts.Samples
	})
	return out
}

func labelsText(l []prompb.Label) string {
	var b strings.Builder
	for _, x := range l {
		fmt.Fprintf(&b, "%s=%q,", x.Name, x.Value)
	}
	return b.String()
}

// The translation writes the series that contrib's translator makes from
// the same batch, with the same settings: labels, values, timestamps and
// staleness markers.
func TestTranslateMatchesContrib(t *testing.T) {
	for _, promote := range []bool{false, true} {
		t.Run(fmt.Sprintf("resource_to_telemetry_conversion=%v", promote), func(t *testing.T) {
			cfg := DefaultSettings()
			cfg.ExternalLabels = map[string]string{"host": "node-17", "role": "overridden-by-the-attribute"}
			cfg.MaxBatchSizeBytes = 600 // several requests
			cfg.ResourceToTelemetryConversion = promote
			md := receiverLike(50)

			req, err := New(cfg).Translate(md)
			require.EqualError(t, err, "4 points not sent (2 of delta sums, 2 of histograms): remote_write takes gauges and cumulative sums only")
			got := decoded(t, req.Payloads)
			assert.Greater(t, len(req.Payloads), 3)

			in := md
			if promote {
				// What contrib's resource_to_telemetry_conversion hands
				// its translator: resource attributes copied over each
				// point's, but those that name the target (service.name,
				// service.namespace, service.instance.id): they are job and
				// instance, and this exporter, like Prometheus' OTLP
				// translation, does not repeat them as labels
				// (promname.Identifying), where contrib writes
				// service_name... too.
				in = pmetric.NewMetrics()
				md.CopyTo(in)
				joinResourceAttributes(in)
			}
			want, err := prw.FromMetrics(in, prw.Settings{
				ExternalLabels: cfg.ExternalLabels, TranslationStrategy: "UnderscoreEscapingWithSuffixes",
				AddMetricSuffixes: true, DisableScopeInfo: true, DisableTargetInfo: true,
			})
			_ = err // contrib reports the delta sum and the histogram its own way
			require.Equal(t, len(want), len(got), "series")
			for _, ts := range want {
				k := labelsText(ts.Labels)
				g, ok := got[k]
				if !assert.True(t, ok, "series %s missing", k) {
					continue
				}
				require.Len(t, g, 1)
				assert.Equal(t, ts.Samples[0].Timestamp, g[0].Timestamp, k)
				if value.IsStaleNaN(ts.Samples[0].Value) {
					assert.True(t, value.IsStaleNaN(g[0].Value), "%s: a staleness marker", k)
				} else {
					assert.Equal(t, ts.Samples[0].Value, g[0].Value, k)
				}
			}
			if promote {
				assert.Contains(t, got, `__name__="ernic_qp_bytes_sent_total",ernic_id="2",host="node-17",instance="node-17",job="gpu/otelcol-ernic",qp="0",role="worker",`)
				return
			}
			assert.Contains(t, got, `__name__="ernic_qp_bytes_sent_total",ernic_id="2",host="node-17",instance="node-17",job="gpu/otelcol-ernic",qp="0",role="worker",`)
			assert.Contains(t, got, `__name__="ernic_vm_attached",ernic_id="1",host="node-17",role="overridden-by-the-attribute",`)
			assert.False(t, math.IsNaN(got[`__name__="ernic_instance_uptime_seconds",host="node-17",role="overridden-by-the-attribute",`][0].Value))
		})
	}
}

// joinResourceAttributes copies each resource's attributes over the
// attributes of its points, as contrib's resource_to_telemetry_conversion.
func joinResourceAttributes(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		res := rms.At(i).Resource().Attributes()
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				var dps pmetric.NumberDataPointSlice
				switch m := ms.At(k); m.Type() {
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				default:
					continue
				}
				for p := range dps.Len() {
					for key, v := range res.All() {
						if !promname.Identifying(key) {
							v.CopyTo(dps.At(p).Attributes().PutEmpty(key))
						}
					}
				}
			}
		}
	}
}

// hostLike is a batch shaped like a scrape of the ernic receiver after the
// shipped pipeline's resource/host processor: a resource per instance
// (ernic.id, role, service.name, service.instance.id) with 25 metrics of
// one point, the 74 LIF counters as one metric, and 8 per-QP metrics of
// qps points each.
func hostLike(instances, qps int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 123_000_000))
	for id := range instances {
		rm := md.ResourceMetrics().AppendEmpty()
		res := rm.Resource().Attributes()
		res.PutStr("ernic.id", fmt.Sprint(id+1))
		res.PutStr("role", "worker")
		res.PutStr("service.name", "ernic")
		res.PutStr("service.instance.id", "node-17")
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		counter := func(name string) pmetric.NumberDataPointSlice {
			m := ms.AppendEmpty()
			m.SetName(name)
			sum := m.SetEmptySum()
			sum.SetIsMonotonic(true)
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			return sum.DataPoints()
		}
		for i := range 25 {
			dp := counter(fmt.Sprintf("ernic.device.counter%d", i)).AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(i))
		}
		lif := counter("ernic.lif.counter")
		for i := range 74 {
			dp := lif.AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(i))
			dp.Attributes().PutStr("counter", fmt.Sprintf("lif_counter_%d", i))
		}
		for k := range 8 {
			dps := counter(fmt.Sprintf("ernic.qp.counter%d", k))
			for q := range qps {
				dp := dps.AppendEmpty()
				dp.SetTimestamp(ts)
				dp.SetIntValue(int64(q * k))
				dp.Attributes().PutStr("qp", fmt.Sprint(q*7+1))
			}
		}
	}
	return md
}

func BenchmarkTranslate(b *testing.B) {
	cfg := DefaultSettings()
	for _, size := range []struct{ instances, qps int }{{16, 64}, {64, 1024}} {
		md := hostLike(size.instances, size.qps)
		n := md.DataPointCount()
		b.Run(fmt.Sprintf("host-%dx%d", size.instances, size.qps), func(b *testing.B) {
			tr := New(cfg)
			b.ReportAllocs()
			for b.Loop() {
				_, _ = tr.Translate(md)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/point")
		})
		// As merge translates with a bytes-sized queue (the shipped
		// config's 256 MiB): every series checked against the bound.
		b.Run(fmt.Sprintf("host-%dx%d-queue-bound", size.instances, size.qps), func(b *testing.B) {
			tr := New(cfg)
			b.ReportAllocs()
			for b.Loop() {
				st := tr.Begin()
				st.CapBytes, st.Spill = 256<<20, func(*Batch) { b.Fatal("spilled under 256 MiB") }
				tr.add(st, md)
				_ = tr.End(st)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/point")
		})
	}
	md := receiverLike(50_000)
	n := md.DataPointCount()
	b.Run("direct", func(b *testing.B) {
		tr := New(cfg)
		b.ReportAllocs()
		for range b.N {
			_, _ = tr.Translate(md)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/point")
	})
	b.Run("contrib-FromMetrics", func(b *testing.B) {
		s := prw.Settings{TranslationStrategy: "UnderscoreEscapingWithSuffixes", AddMetricSuffixes: true, DisableScopeInfo: true, DisableTargetInfo: true}
		b.ReportAllocs()
		for range b.N {
			_, _ = prw.FromMetrics(md, s)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/point")
	})
}

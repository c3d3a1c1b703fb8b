// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// bulkPoints appends the points of the bulk metrics (one point per QP, LIF
// counter or opcode: 97 % of a scrape's points at 1024 QPs an instance)
// straight to the instance's metrics, past the generated MetricsBuilder.
//
// Why not the builder: its Record functions build each point apart, search
// every point recorded since the last emit for one with equal attributes
// (mdatagen's spatial reaggregation: quadratic in a metric's points) and
// then move the point into place; about 11 allocations and 680 bytes a
// point, 1.97 µs a point at 64 instances × 1024 QPs (BenchmarkScrape before
// this path, with the search cut short by emitting every 4 QPs and merging
// the pieces). Here a point is appended in place with its one attribute
// (qp or counter; ernic.id and role are the resource's): 4 allocations. Everything else about a metric - name, description, unit,
// type, temporality, whether it is enabled - still comes from metadata.yaml
// through the generated code (bulkShapes); the builder records the
// per-instance and cluster metrics as before.
//
// Used only while every bulk metric keeps its default attributes: a metric
// with an attribute turned off must fold its points, which the builder does
// (scraper.bulk is nil then).
type bulkPoints struct {
	// shapes holds an empty copy of each bulk metric, from the generated
	// builder (bulkShapes).
	shapes map[string]pmetric.Metric
	// out holds the bulk metrics of the instance being recorded.
	out pmetric.MetricSlice
	// points is each bulk metric's points in out.
	points map[string]pmetric.NumberDataPointSlice
}

func newBulkPoints(shapes map[string]pmetric.Metric) *bulkPoints {
	return &bulkPoints{
		shapes: shapes,
		out:    pmetric.NewMetricSlice(),
		points: map[string]pmetric.NumberDataPointSlice{},
	}
}

// slice returns the points of the bulk metric name of the instance being
// recorded, adding the metric, with room for n points, at its first point.
func (b *bulkPoints) slice(name string, n int) pmetric.NumberDataPointSlice {
	if dps, ok := b.points[name]; ok {
		return dps
	}
	m := b.out.AppendEmpty()
	b.shapes[name].CopyTo(m)
	dps := numberPoints(m)
	dps.EnsureCapacity(n)
	b.points[name] = dps
	return dps
}

// add appends one point of a bulk metric with the attribute key = value
// (qp or counter) and room for extra more attributes. The instance's
// ernic.id and role are its resource's.
func (b *bulkPoints) add(dps pmetric.NumberDataPointSlice, start, ts pcommon.Timestamp, v int64, key, value string, extra int) pcommon.Map {
	dp := dps.AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	dp.SetIntValue(v)
	a := dp.Attributes()
	a.EnsureCapacity(1 + extra)
	a.PutStr(key, value)
	return a
}

// moveTo moves the instance's bulk metrics to the end of ms and readies b
// for the next instance.
func (b *bulkPoints) moveTo(ms pmetric.MetricSlice) {
	clear(b.points)
	b.out.MoveAndAppendTo(ms)
}

// forEachMetric calls fn with every metric of md.
func forEachMetric(md pmetric.Metrics, fn func(pmetric.Metric)) {
	rms := md.ResourceMetrics()
	for r := range rms.Len() {
		sms := rms.At(r).ScopeMetrics()
		for s := range sms.Len() {
			ms := sms.At(s).Metrics()
			for i := range ms.Len() {
				fn(ms.At(i))
			}
		}
	}
}

// attributedMetric is what the receiver reads of the generated
// configuration of a metric with attributes: its Enabled flag (a pointer,
// bulkShapes sets it) and how many attributes it keeps. Typed field access,
// not reflection, so that an mdatagen rename of these fields fails the build.
type attributedMetric func(mc *metadata.MetricsConfig) (enabled *bool, attrs int)

// attributedMetrics holds every metric of metadata.yaml with attributes, by
// name. TestAttributedMetricsComplete fails, naming the metric, when one is
// missing or reads another metric's fields.
var attributedMetrics = map[string]attributedMetric{
	metadata.MetricsInfo.ErnicConnectionUp.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicConnectionUp.Enabled, len(mc.ErnicConnectionUp.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicInstanceUp.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicInstanceUp.Enabled, len(mc.ErnicInstanceUp.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicLifCounter.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicLifCounter.Enabled, len(mc.ErnicLifCounter.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpBytesRdmaRead.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpBytesRdmaRead.Enabled, len(mc.ErnicQpBytesRdmaRead.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpBytesRdmaWrite.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpBytesRdmaWrite.Enabled, len(mc.ErnicQpBytesRdmaWrite.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpBytesReceived.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpBytesReceived.Enabled, len(mc.ErnicQpBytesReceived.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpBytesSent.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpBytesSent.Enabled, len(mc.ErnicQpBytesSent.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpCqesPosted.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpCqesPosted.Enabled, len(mc.ErnicQpCqesPosted.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpDoorbellRecv.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpDoorbellRecv.Enabled, len(mc.ErnicQpDoorbellRecv.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpDoorbellSend.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpDoorbellSend.Enabled, len(mc.ErnicQpDoorbellSend.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpWqesByOpcode.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpWqesByOpcode.Enabled, len(mc.ErnicQpWqesByOpcode.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicQpWqesProcessed.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicQpWqesProcessed.Enabled, len(mc.ErnicQpWqesProcessed.EnabledAttributes)
	},
	metadata.MetricsInfo.ErnicVMAttached.Name: func(mc *metadata.MetricsConfig) (*bool, int) {
		return &mc.ErnicVMAttached.Enabled, len(mc.ErnicVMAttached.EnabledAttributes)
	},
}

// enabledFlag returns the Enabled flag of the metric called name, one of
// attributedMetrics (every bulk metric is); it panics on another name, a
// defect of this package that every scraper test would hit.
func enabledFlag(mc *metadata.MetricsConfig, name string) *bool {
	m, ok := attributedMetrics[name]
	if !ok {
		panic("ernicreceiver: metric " + name + " is not in attributedMetrics")
	}
	on, _ := m(mc)
	return on
}

// reaggregates reports whether an enabled metric of mc has fewer attributes
// than by default (the generated `attributes` setting). The builder then
// folds points whose remaining attributes are equal, with the metric's
// aggregation_strategy, but only among the points of one emit: such a
// scrape is recorded in one piece. Its cost then grows with the square of
// the points each metric keeps after folding: small when the attribute
// dropped tells series apart (qp, counter), as without pieces otherwise.
func reaggregates(mc metadata.MetricsConfig) bool {
	def := metadata.DefaultMetricsConfig()
	for _, m := range attributedMetrics {
		on, n := m(&mc)
		if _, d := m(&def); *on && n < d {
			return true
		}
	}
	return false
}

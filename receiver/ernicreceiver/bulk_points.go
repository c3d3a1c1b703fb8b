// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// bulkPoints appends the per-QP, LIF counter and opcode points straight to
// the instance's metrics: the generated builder searches all points since the
// last emit for equal attributes (docs/performance.md, Receiver benchmarks).
// Used only while every bulk metric keeps its default attributes.
type bulkPoints struct {
	// shapes holds an empty copy of each bulk metric (bulkShapes).
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

// slice returns the points of metric name, adding it at its first point.
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

// add appends one point with key = value and room for extra attributes.
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

// moveTo moves the bulk metrics to ms and readies b for the next instance.
func (b *bulkPoints) moveTo(ms pmetric.MetricSlice) {
	clear(b.points)
	b.out.MoveAndAppendTo(ms)
}

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

// attributedMetric reads a metric's generated Enabled flag and attribute
// count by field, not reflection, so that an mdatagen rename fails the build.
type attributedMetric func(mc *metadata.MetricsConfig) (enabled *bool, attrs int)

// attributedMetrics: TestAttributedMetricsComplete checks it is complete.
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

// enabledFlag returns the Enabled flag of name; it panics on an unknown one.
func enabledFlag(mc *metadata.MetricsConfig, name string) *bool {
	m, ok := attributedMetrics[name]
	if !ok {
		panic("ernicreceiver: metric " + name + " is not in attributedMetrics")
	}
	on, _ := m(mc)
	return on
}

// reaggregates reports whether a metric dropped an attribute: the builder
// folds only within one emit, so the scrape is then recorded in one piece.
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

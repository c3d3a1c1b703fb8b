// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package selftelemetryreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver"

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// staleness ends the series that stop (the oldest queued batch's time once
// the queue is empty, an exporter that went away) with one point flagged
// no recorded value, so that a backend ends them rather than show the last
// value for its lookback: a queue's oldest batch five minutes after it was
// sent would read as lag. A scrape holds a few dozen points, so each is
// simply looked up by its name and attributes.
type staleness struct {
	// shapes holds each published metric without points, to rebuild one.
	shapes map[string]pmetric.Metric
	// last is the series of the last scrape, by seriesKey.
	last map[string]series
}

// series is one published series: its metric and its point's attributes and start.
type series struct {
	metric string
	attrs  pcommon.Map
	start  pcommon.Timestamp
}

func newStaleness() *staleness {
	return &staleness{shapes: map[string]pmetric.Metric{}, last: map[string]series{}}
}

// mark records the series of md (one resource, one scope: the builder's)
// and appends a marker at ts for each series of the last scrape md lacks.
func (t *staleness) mark(md pmetric.Metrics, ts pcommon.Timestamp) {
	if md.ResourceMetrics().Len() == 0 {
		// Every metric off, or the resource filtered out: nothing to end.
		return
	}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	now := make(map[string]series, len(t.last))
	for i := range ms.Len() {
		m := ms.At(i)
		if _, ok := t.shapes[m.Name()]; !ok {
			t.shapes[m.Name()] = shapeOf(m)
		}
		dps := points(m)
		for j := range dps.Len() {
			dp := dps.At(j)
			now[seriesKey(m.Name(), dp.Attributes())] = series{metric: m.Name(), attrs: dp.Attributes(), start: dp.StartTimestamp()}
		}
	}
	var gone []string
	for k := range t.last {
		if _, ok := now[k]; !ok {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	for _, k := range gone {
		s := t.last[k]
		dp := points(metricIn(ms, t.shapes[s.metric])).AppendEmpty()
		s.attrs.CopyTo(dp.Attributes())
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(ts)
		dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
	}
	// The attributes are md's, which the pipeline may change: keep copies.
	for k, s := range now {
		attrs := pcommon.NewMap()
		s.attrs.CopyTo(attrs)
		s.attrs = attrs
		now[k] = s
	}
	t.last = now
}

// seriesKey is a metric's name and a point's attributes, in key order.
func seriesKey(name string, attrs pcommon.Map) string {
	var b strings.Builder
	b.WriteString(name)
	keys := make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := attrs.Get(k)
		b.WriteString("\x00" + k + "\x00" + v.AsString())
	}
	return b.String()
}

// shapeOf is m without its points.
func shapeOf(m pmetric.Metric) pmetric.Metric {
	s := pmetric.NewMetric()
	s.SetName(m.Name())
	s.SetDescription(m.Description())
	s.SetUnit(m.Unit())
	switch m.Type() {
	case pmetric.MetricTypeSum:
		sum := s.SetEmptySum()
		sum.SetIsMonotonic(m.Sum().IsMonotonic())
		sum.SetAggregationTemporality(m.Sum().AggregationTemporality())
	default:
		s.SetEmptyGauge()
	}
	return s
}

// metricIn returns the metric of ms named as shape, added from shape if absent.
func metricIn(ms pmetric.MetricSlice, shape pmetric.Metric) pmetric.Metric {
	for i := range ms.Len() {
		if ms.At(i).Name() == shape.Name() {
			return ms.At(i)
		}
	}
	m := ms.AppendEmpty()
	shape.CopyTo(m)
	return m
}

// points returns the number points of a gauge or a sum, the only types
// this receiver publishes.
func points(m pmetric.Metric) pmetric.NumberDataPointSlice {
	if m.Type() == pmetric.MetricTypeSum {
		return m.Sum().DataPoints()
	}
	return m.Gauge().DataPoints()
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// staleness ends the series that stop with one NoRecordedValue point in
// their resource, so that exporters end them rather than let the last value
// linger (docs/metrics.md, Series that stop).
//
// In steady state each point is compared with the series at its place in the
// previous scrape: one compare a point, no allocation.
type staleness struct {
	// metrics holds each published metric's shape, to rebuild one gone stale.
	metrics map[string]pmetric.Metric
	// resources holds the resources with published series, by encoded attributes.
	resources map[string]*resource
	// scopeName and scopeVersion are the receiver's scope.
	scopeName, scopeVersion string
	gen                     uint64
	// buf holds the encoded attributes of the resource being seen.
	buf []byte
}

// resource is one resource with published series.
type resource struct {
	// key is encodeAttrs of its attributes (decoded for the markers).
	key string
	// gen is the last scrape that published the resource.
	gen uint64
	// again: published in several batches this scrape (a resource attribute
	// turned off made instances alike); multi: last scrape. Then the series
	// gather in pending until finish.
	again, multi bool
	// series is each metric's series of the last complete scrape.
	series map[string]*seriesList
	// pending gathers this scrape's series while again or multi.
	pending map[string]*seriesList
}

func newStaleness(scopeName, scopeVersion string) *staleness {
	return &staleness{
		metrics:   map[string]pmetric.Metric{},
		resources: map[string]*resource{},
		scopeName: scopeName, scopeVersion: scopeVersion,
	}
}

func (t *staleness) begin() { t.gen++ }

// resourceOf returns the kept resource of rm, adding it when new.
func (t *staleness) resourceOf(rm pmetric.ResourceMetrics) *resource {
	t.buf = encodeAttrs(t.buf[:0], rm.Resource().Attributes())
	if r, ok := t.resources[string(t.buf)]; ok {
		return r
	}
	r := &resource{key: string(t.buf), series: map[string]*seriesList{}}
	t.resources[r.key] = r
	return r
}

// mark records the series of rm, one resource's batch (one emit: each metric
// once), and appends a marker at ts for each series of its last scrape it lacks.
func (t *staleness) mark(rm pmetric.ResourceMetrics, ts pcommon.Timestamp) {
	res := t.resourceOf(rm)
	if res.gen == t.gen {
		res.again = true
	}
	res.gen = t.gen
	if res.again || res.multi {
		// Compared at finish, with all the resource's batches.
		if res.pending == nil {
			res.pending = map[string]*seriesList{}
			if !res.multi {
				// The scrape's first batch was compared alone: gather from it.
				for name, l := range res.series {
					if l.gen == t.gen {
						res.pending[name] = l.unsealed()
					}
				}
			}
		}
		t.eachMetric(rm, func(name string, dps pmetric.NumberDataPointSlice) {
			l := res.pending[name]
			if l == nil {
				l = &seriesList{}
				res.pending[name] = l
			}
			l.appendPoints(dps)
		})
		return
	}
	ms := t.scopeMetrics(rm)
	t.eachMetric(rm, func(name string, dps pmetric.NumberDataPointSlice) {
		prev := res.series[name]
		if prev != nil && prev.sameSeries(dps) {
			prev.gen = t.gen
			return
		}
		next := newSeriesList(dps, t.gen)
		res.series[name] = next
		if prev != nil {
			t.endMissing(prev, next, dps, ts)
		}
	})
	t.endMetricsNotIn(res, ms, ts)
}

// eachMetric calls fn for every number metric of rm, keeping its shape.
func (t *staleness) eachMetric(rm pmetric.ResourceMetrics, fn func(string, pmetric.NumberDataPointSlice)) {
	sms := rm.ScopeMetrics()
	for j := range sms.Len() {
		ms := sms.At(j).Metrics()
		for i := range ms.Len() {
			m := ms.At(i)
			name := m.Name()
			if _, ok := t.metrics[name]; !ok {
				t.metrics[name] = metricShape(m)
			}
			fn(name, numberPoints(m))
		}
	}
}

// endMissing appends to dps a marker for each series of prev not in next.
func (t *staleness) endMissing(prev, next *seriesList, dps pmetric.NumberDataPointSlice, ts pcommon.Timestamp) {
	now := make(map[string]struct{}, next.len())
	for i := range next.len() {
		now[next.attrs(i)] = struct{}{}
	}
	for i := range prev.len() {
		if _, ok := now[prev.attrs(i)]; !ok {
			appendMarker(dps, prev.attrs(i), prev.startOf(i), ts)
		}
	}
}

// endMetricsNotIn ends and forgets the metrics of res this scrape lacked.
func (t *staleness) endMetricsNotIn(res *resource, ms pmetric.MetricSlice, ts pcommon.Timestamp) {
	for name, l := range res.series {
		if l.gen == t.gen {
			continue
		}
		dps := numberPoints(t.metricIn(ms, name))
		for i := range l.len() {
			appendMarker(dps, l.attrs(i), l.startOf(i), ts)
		}
		delete(res.series, name)
	}
}

// finish returns the markers at ts of the resources the scrape did not
// publish (and forgets them) and of those published in several batches. A cut
// scrape keeps what it did not publish: it was not seen to end.
func (t *staleness) finish(ts pcommon.Timestamp, cut bool) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for key, res := range t.resources {
		published := res.gen == t.gen
		if published && !res.again && !res.multi || !published && cut {
			continue
		}
		rm := md.ResourceMetrics().AppendEmpty()
		decodeAttrs(res.key, rm.Resource().Attributes())
		ms := t.scopeMetrics(rm)
		for name, next := range res.pending {
			next.seal()
			next.gen = t.gen
			if prev := res.series[name]; prev != nil {
				t.endMissing(prev, next, numberPoints(t.metricIn(ms, name)), ts)
			}
			res.series[name] = next
		}
		t.endMetricsNotIn(res, ms, ts)
		res.multi, res.again, res.pending = res.again, false, nil
		if !published {
			delete(t.resources, key)
		}
	}
	// Drop the metrics added for markers that were not needed.
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rms.At(i).ScopeMetrics().At(0).Metrics().RemoveIf(func(m pmetric.Metric) bool {
			return numberPoints(m).Len() == 0
		})
	}
	rms.RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		return rm.ScopeMetrics().At(0).Metrics().Len() == 0
	})
	return md
}

// scopeMetrics returns rm's first scope's metrics, adding the receiver's.
func (t *staleness) scopeMetrics(rm pmetric.ResourceMetrics) pmetric.MetricSlice {
	if rm.ScopeMetrics().Len() == 0 {
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(t.scopeName)
		sm.Scope().SetVersion(t.scopeVersion)
	}
	return rm.ScopeMetrics().At(0).Metrics()
}

// appendMarker appends a NoRecordedValue point at ts for the series attrs.
func appendMarker(dps pmetric.NumberDataPointSlice, attrs string, start, ts pcommon.Timestamp) {
	dp := dps.AppendEmpty()
	decodeAttrs(attrs, dp.Attributes())
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
}

// metricIn returns the metric name in ms, adding it from its shape.
func (t *staleness) metricIn(ms pmetric.MetricSlice, name string) pmetric.Metric {
	for i := range ms.Len() {
		if ms.At(i).Name() == name {
			return ms.At(i)
		}
	}
	m := ms.AppendEmpty()
	t.metrics[name].CopyTo(m)
	return m
}

// metricShape returns an empty copy of m.
func metricShape(m pmetric.Metric) pmetric.Metric {
	c := pmetric.NewMetric()
	c.SetName(m.Name())
	c.SetDescription(m.Description())
	c.SetUnit(m.Unit())
	switch m.Type() {
	case pmetric.MetricTypeSum:
		s := c.SetEmptySum()
		s.SetAggregationTemporality(m.Sum().AggregationTemporality())
		s.SetIsMonotonic(m.Sum().IsMonotonic())
	default:
		c.SetEmptyGauge()
	}
	return c
}

func numberPoints(m pmetric.Metric) pmetric.NumberDataPointSlice {
	if m.Type() == pmetric.MetricTypeSum {
		return m.Sum().DataPoints()
	}
	return m.Gauge().DataPoints()
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// staleness ends the series that stop. It remembers, per resource and
// metric, the series (attribute sets) the last scrape published; a series
// the next scrape no longer has (an instance left the manifest, a process
// died, a VM was detached, the connection state changed, the run directory
// vanished) gets one data point flagged NoRecordedValue, in its resource.
// Exporters turn that into an end of the series: the Prometheus exporters
// drop it from /metrics at once, remote write sends a staleness marker,
// OTLP passes the flag on. Without it, the last value would linger until
// the exporter's expiry (Prometheus: a five-minute flat tail).
//
// A scrape is begin, then mark for each resource's batch as the scraper
// emits it (the markers of that resource's series that stopped go into the
// same batch), then finish, which returns the markers of the resources the
// scrape did not publish at all (an instance that left) and of those it
// published in several batches.
//
// Steady state costs one compare per published point and allocates
// nothing: a metric's points come in the same order each scrape, so each
// point is compared with the series at its place in the previous scrape
// (sameAttrs, without encoding it). Only a metric whose series changed is
// encoded again and compared as a set. A series is kept as its attributes
// encoded (encodeAttrs) in one buffer per resource and metric, plus its
// end offset: about 10 to 30 bytes a series, and one start time per metric
// while all its series share it (those of one server process do).
type staleness struct {
	// metrics holds an empty copy (name, unit, description, type) of every
	// metric published, to rebuild one whose points all went stale.
	metrics map[string]pmetric.Metric
	// resources holds every resource with published series, by its
	// encoded attributes.
	resources map[string]*resource
	// scope is the instrumentation scope of the receiver's metrics.
	scopeName, scopeVersion string
	gen                     uint64
	// buf holds the encoded attributes of the resource being seen.
	buf []byte
}

// resource is one resource with published series.
type resource struct {
	// key is encodeAttrs of its attributes; decodeAttrs gives them back
	// for the markers of a resource that left.
	key string
	// gen is the last scrape that published the resource.
	gen uint64
	// again: this scrape published the resource in more than one batch
	// (a resource attribute turned off made instances alike); multi: the
	// previous scrape did. Then its series are gathered in pending and
	// compared at finish, when all of its batches are seen.
	again, multi bool
	// series is each metric's series of the last complete scrape.
	series map[string]*seriesList
	// pending is each metric's series gathered from this scrape's batches
	// while again or multi.
	pending map[string]*seriesList
}

func newStaleness(scopeName, scopeVersion string) *staleness {
	return &staleness{
		metrics:   map[string]pmetric.Metric{},
		resources: map[string]*resource{},
		scopeName: scopeName, scopeVersion: scopeVersion,
	}
}

// begin starts a scrape.
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

// mark records the series of rm, one resource's batch of this scrape, and
// appends to rm a NoRecordedValue point at ts for each series of the
// resource's previous scrape that rm lacks. A batch has each metric once
// (one emit of the generated builder).
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
				// The scrape's first batch was compared alone; its
				// series are the first of the gathering.
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

// eachMetric calls fn with the name and points of every number metric of
// rm, remembering each metric's shape.
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

// endMissing appends to dps a marker at ts for each series of prev that
// next lacks.
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

// endMetricsNotIn appends to ms the markers at ts of every series of the
// metrics of res that this scrape did not publish, and forgets them.
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

// finish ends the scrape: it returns the markers at ts of the resources
// the scrape did not publish (and forgets them), and of the resources it
// published in several batches. After a cut scrape (cut), the resources it
// did not publish are kept as they are: they were not seen to end, and the
// next whole scrape ends them if they did.
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

// scopeMetrics returns the metrics of rm's first scope, adding the
// receiver's scope when rm has none.
func (t *staleness) scopeMetrics(rm pmetric.ResourceMetrics) pmetric.MetricSlice {
	if rm.ScopeMetrics().Len() == 0 {
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(t.scopeName)
		sm.Scope().SetVersion(t.scopeVersion)
	}
	return rm.ScopeMetrics().At(0).Metrics()
}

// appendMarker appends to dps a NoRecordedValue point at ts of the series
// with the encoded attributes attrs and start time start.
func appendMarker(dps pmetric.NumberDataPointSlice, attrs string, start, ts pcommon.Timestamp) {
	dp := dps.AppendEmpty()
	decodeAttrs(attrs, dp.Attributes())
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
}

// metricIn returns the metric called name in ms, adding it from its
// remembered shape.
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

// metricShape returns an empty copy of m: name, description, unit, type and
// for sums temporality and monotonicity.
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

// numberPoints returns the points of a sum or gauge.
func numberPoints(m pmetric.Metric) pmetric.NumberDataPointSlice {
	if m.Type() == pmetric.MetricTypeSum {
		return m.Sum().DataPoints()
	}
	return m.Gauge().DataPoints()
}

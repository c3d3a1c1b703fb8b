package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"hash/maphash"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// staleness ends the series that stop. It remembers the series (metric name
// and attributes) each scrape published; a series the next scrape no longer
// has (an instance left the manifest, a process died, a VM was detached, the
// connection state changed, the run directory vanished) gets one data point
// flagged NoRecordedValue. Exporters turn that into an end of the series:
// the Prometheus exporter drops it from /metrics at once, remote write sends
// a staleness marker, OTLP passes the flag on. Without it, the last value
// would linger until the exporter's expiry (Prometheus: a five-minute flat
// tail).
//
// Steady state costs one hash and one map lookup per published point; only
// new series are copied. A series is known by its metric name and a 64-bit
// seeded hash of its attributes: two live series that collide (odds about
// n²/2^65 for n series, 3e-8 for a million) would only cost the end marker
// of one of them, never a value.
type staleness struct {
	seed   maphash.Seed
	series map[uint64]*series
	// metrics holds an empty copy (name, unit, description, type) of every
	// metric published, to rebuild one whose points all went stale.
	metrics map[string]pmetric.Metric
	// scope is the instrumentation scope of the receiver's metrics.
	scopeName, scopeVersion string
	gen                     uint64
}

// series is one published series; next chains series of other metrics
// whose attributes hash alike.
type series struct {
	name  string
	attrs pcommon.Map
	start pcommon.Timestamp
	gen   uint64
	next  *series
}

func newStaleness(scopeName, scopeVersion string) *staleness {
	return &staleness{
		seed:      maphash.MakeSeed(),
		series:    map[uint64]*series{},
		metrics:   map[string]pmetric.Metric{},
		scopeName: scopeName, scopeVersion: scopeVersion,
	}
}

// mark records the series of md, a scrape's metrics in one resource and
// scope as the scraper emits them, and appends a NoRecordedValue point at
// ts for each series of the previous scrape that md lacks.
func (t *staleness) mark(md pmetric.Metrics, ts pcommon.Timestamp) {
	t.gen++
	var h maphash.Hash
	h.SetSeed(t.seed)
	rms := md.ResourceMetrics()
	for r := range rms.Len() {
		sms := rms.At(r).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for i := range ms.Len() {
				m := ms.At(i)
				if _, ok := t.metrics[m.Name()]; !ok {
					t.metrics[m.Name()] = metricShape(m)
				}
				dps := numberPoints(m)
				for k := range dps.Len() {
					t.see(&h, m.Name(), dps.At(k))
				}
			}
		}
	}

	var stale map[string]pmetric.NumberDataPointSlice
	for key, s := range t.series {
		var keep *series
		for ; s != nil; s = s.next {
			if s.gen == t.gen {
				s.next, keep = keep, s
				continue
			}
			if stale == nil {
				stale = map[string]pmetric.NumberDataPointSlice{}
			}
			dps, ok := stale[s.name]
			if !ok {
				dps = numberPoints(t.metricIn(md, s.name))
				stale[s.name] = dps
			}
			dp := dps.AppendEmpty()
			s.attrs.MoveTo(dp.Attributes())
			dp.SetStartTimestamp(s.start)
			dp.SetTimestamp(ts)
			dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
		}
		if keep == nil {
			delete(t.series, key)
		} else {
			t.series[key] = keep
		}
	}
}

// see records one published point as a series of this scrape.
func (t *staleness) see(h *maphash.Hash, name string, dp pmetric.NumberDataPoint) {
	h.Reset()
	h.WriteString(name)
	for k, v := range dp.Attributes().All() {
		h.WriteByte(0)
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v.AsString())
	}
	key := h.Sum64()
	for s := t.series[key]; s != nil; s = s.next {
		if s.name == name {
			s.gen, s.start = t.gen, dp.StartTimestamp()
			return
		}
	}
	s := &series{name: name, attrs: pcommon.NewMap(), start: dp.StartTimestamp(), gen: t.gen, next: t.series[key]}
	dp.Attributes().CopyTo(s.attrs)
	t.series[key] = s
}

// metricIn returns the metric called name in md, adding it (and a resource
// and scope when md has none) from its remembered shape.
func (t *staleness) metricIn(md pmetric.Metrics, name string) pmetric.Metric {
	rms := md.ResourceMetrics()
	if rms.Len() == 0 {
		sm := rms.AppendEmpty().ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(t.scopeName)
		sm.Scope().SetVersion(t.scopeVersion)
	}
	ms := rms.At(0).ScopeMetrics().At(0).Metrics()
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

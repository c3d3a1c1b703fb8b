package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"

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
// Steady state costs one compare per published point: a metric's points
// come in the same order each scrape, so each point is first compared with
// the series at its place in the previous scrape (sameAttrs, no hashing,
// no allocation); only a point that differs is looked up by hash, and only
// new series allocate. When every series of the previous scrape came again
// in place, nothing went stale and the sweep over all series is skipped. A series is kept as its metric
// name and its attributes encoded in one string (encodeAttrs), about 140
// bytes a series with the map entry: at 64 instances of 1024 QPs (530,000
// series) that is 70 MiB, where a pcommon.Map copy per series took 150 MiB.
// Series whose 64-bit hashes collide are chained and told apart by name and
// attributes, so a collision costs nothing but the chain.
type staleness struct {
	seed   maphash.Seed
	series map[uint64]*series
	// metrics holds an empty copy (name, unit, description, type) of every
	// metric published, to rebuild one whose points all went stale.
	metrics map[string]pmetric.Metric
	// scope is the instrumentation scope of the receiver's metrics.
	scopeName, scopeVersion string
	gen                     uint64
	// order is each metric's series in the order of the previous scrape.
	order map[string][]*series
	// count is the number of series kept.
	count int
	// buf holds the encoded attributes of the point being seen.
	buf []byte
	// sum is (*maphash.Hash).Sum64; tests make every series collide.
	sum func(*maphash.Hash) uint64
}

// series is one published series; next chains series whose name and
// attributes hash alike.
type series struct {
	name  string
	attrs string // encodeAttrs of its attributes, in point order
	start pcommon.Timestamp
	gen   uint64
	next  *series
}

func newStaleness(scopeName, scopeVersion string) *staleness {
	return &staleness{
		seed:      maphash.MakeSeed(),
		series:    map[uint64]*series{},
		metrics:   map[string]pmetric.Metric{},
		order:     map[string][]*series{},
		scopeName: scopeName, scopeVersion: scopeVersion,
		sum: (*maphash.Hash).Sum64,
	}
}

// mark records the series of md, a scrape's metrics in one resource and
// scope as the scraper emits them, and appends a NoRecordedValue point at
// ts for each series of the previous scrape that md lacks.
func (t *staleness) mark(md pmetric.Metrics, ts pcommon.Timestamp) {
	t.gen++
	var h maphash.Hash
	h.SetSeed(t.seed)
	inPlace := 0     // points that matched the previous scrape's series in place
	changed := false // a point out of place, or a metric with another count
	rms := md.ResourceMetrics()
	for r := range rms.Len() {
		sms := rms.At(r).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for i := range ms.Len() {
				m := ms.At(i)
				name := m.Name()
				if _, ok := t.metrics[name]; !ok {
					t.metrics[name] = metricShape(m)
				}
				prev := t.order[name]
				dps := numberPoints(m)
				var next []*series // allocated at the first point out of place
				for k := range dps.Len() {
					dp := dps.At(k)
					if next == nil && k < len(prev) && prev[k].gen != t.gen && sameAttrs(prev[k].attrs, dp.Attributes()) {
						prev[k].gen, prev[k].start = t.gen, dp.StartTimestamp()
						inPlace++
						continue
					}
					if next == nil {
						next = make([]*series, k, dps.Len())
						copy(next, prev[:k])
					}
					next = append(next, t.see(&h, name, dp))
				}
				if next != nil || len(prev) != dps.Len() {
					changed = true
					if next == nil {
						next = prev[:dps.Len()]
					}
					t.order[name] = next
				}
			}
		}
	}
	if inPlace == t.count && !changed {
		// Every series came again at its place and no other: none is
		// stale, and the order of every metric is unchanged.
		return
	}
	for name, o := range t.order {
		o = slices.DeleteFunc(o, func(s *series) bool { return s.gen != t.gen })
		if len(o) == 0 {
			delete(t.order, name)
		} else {
			t.order[name] = o
		}
	}

	var stale map[string]pmetric.NumberDataPointSlice
	for key, s := range t.series {
		var keep *series
		for next := s; next != nil; {
			s, next = next, next.next
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
			decodeAttrs(s.attrs, dp.Attributes())
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
	t.count = 0
	for _, o := range t.order {
		t.count += len(o)
	}
}

// see records one published point as a series of this scrape and returns
// it.
func (t *staleness) see(h *maphash.Hash, name string, dp pmetric.NumberDataPoint) *series {
	t.buf = encodeAttrs(t.buf[:0], dp.Attributes())
	h.Reset()
	h.WriteString(name)
	h.WriteByte(0)
	h.Write(t.buf)
	key := t.sum(h)
	for s := t.series[key]; s != nil; s = s.next {
		if s.name == name && s.attrs == string(t.buf) {
			s.gen, s.start = t.gen, dp.StartTimestamp()
			return s
		}
	}
	s := &series{name: name, attrs: string(t.buf), start: dp.StartTimestamp(), gen: t.gen, next: t.series[key]}
	t.series[key] = s
	return s
}

// sameAttrs reports whether attrs encode to enc (encodeAttrs), without
// encoding them.
func sameAttrs(enc string, attrs pcommon.Map) bool {
	same := true
	attrs.Range(func(k string, v pcommon.Value) bool {
		if len(enc) == 0 || enc[0] != byte(v.Type()) {
			same = false
			return false
		}
		var key, val string
		key, enc, same = cutField(enc[1:])
		if !same || key != k {
			same = false
			return false
		}
		if val, enc, same = cutField(enc); !same {
			return false
		}
		if v.Type() == pcommon.ValueTypeStr {
			same = val == v.Str()
		} else {
			same = val == v.AsString()
		}
		return same
	})
	return same && len(enc) == 0
}

// cutField splits a uvarint-length-prefixed field off enc.
func cutField(enc string) (field, rest string, ok bool) {
	var n uint64
	for i := 0; i < len(enc) && i < binary.MaxVarintLen64; i++ {
		b := enc[i]
		n |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			enc = enc[i+1:]
			if uint64(len(enc)) < n {
				return "", "", false
			}
			return enc[:n], enc[n:], true
		}
	}
	return "", "", false
}

// encodeAttrs appends attrs to buf as, per attribute, its value type (one
// byte), then the key and the value as text (Value.AsString), each after
// its length as a uvarint: any bytes in keys and values survive.
func encodeAttrs(buf []byte, attrs pcommon.Map) []byte {
	for k, v := range attrs.All() {
		buf = append(buf, byte(v.Type()))
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		var s string
		if v.Type() == pcommon.ValueTypeStr {
			s = v.Str()
		} else {
			s = v.AsString()
		}
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	return buf
}

// decodeAttrs puts the attributes of enc (encodeAttrs) into m. Strings,
// integers, doubles and booleans come back as they were (the text of
// AsString round-trips); any other type, which no metric of metadata.yaml
// has, comes back as its text.
func decodeAttrs(enc string, m pcommon.Map) {
	next := func() string {
		// Only the varint's bytes are converted, not the rest of enc.
		n, w := binary.Uvarint([]byte(enc[:min(len(enc), binary.MaxVarintLen64)]))
		s := enc[w : w+int(n)]
		enc = enc[w+int(n):]
		return s
	}
	for len(enc) > 0 {
		typ := pcommon.ValueType(enc[0])
		enc = enc[1:]
		k := next()
		v := next()
		switch typ {
		case pcommon.ValueTypeInt:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				m.PutInt(k, n)
				continue
			}
		case pcommon.ValueTypeDouble:
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				m.PutDouble(k, f)
				continue
			}
		case pcommon.ValueTypeBool:
			if b, err := strconv.ParseBool(v); err == nil {
				m.PutBool(k, b)
				continue
			}
		}
		m.PutStr(k, v)
	}
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

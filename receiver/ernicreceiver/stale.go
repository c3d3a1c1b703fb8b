package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// staleness ends the series that stop. It remembers, per resource, the
// series (metric name and attributes) each scrape published; a series the
// next scrape no longer has (an instance left the manifest, a process died,
// a VM was detached, the connection state changed, the run directory
// vanished) gets one data point flagged NoRecordedValue, in its resource.
// Exporters turn that into an end of the series: the Prometheus exporters
// drop it from /metrics at once, remote write sends a staleness marker,
// OTLP passes the flag on. Without it, the last value would linger until
// the exporter's expiry (Prometheus: a five-minute flat tail).
//
// A scrape is begin, then mark for each resource's batch as the scraper
// emits it (the markers of that resource's series that stopped go into the
// same batch), then finish, which returns the markers of the resources the
// scrape did not publish at all (an instance that left).
//
// Steady state costs one compare per published point: a metric's points
// come in the same order each scrape, so each point is first compared with
// the series at its place in the previous scrape (sameAttrs, no hashing,
// no allocation); only a point that differs is looked up by hash, and only
// new series allocate. When every series of a resource came again in
// place, nothing of it went stale and the sweep over its series is
// skipped. A series is kept as its metric name and its attributes encoded
// in one string (encodeAttrs), about 100 bytes a series with the map entry.
// Series whose 64-bit hashes collide are chained and told apart by name and
// attributes, so a collision costs nothing but the chain.
type staleness struct {
	seed maphash.Seed
	// metrics holds an empty copy (name, unit, description, type) of every
	// metric published, to rebuild one whose points all went stale.
	metrics map[string]pmetric.Metric
	// resources holds every resource with published series, by its
	// encoded attributes.
	resources map[string]*resource
	// scope is the instrumentation scope of the receiver's metrics.
	scopeName, scopeVersion string
	gen                     uint64
	// buf holds the encoded attributes of the point or resource being seen.
	buf []byte
	// sum is (*maphash.Hash).Sum64; tests make every series collide.
	sum func(*maphash.Hash) uint64
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
	// previous scrape did. Then its sweep waits for finish, when all of
	// its batches are seen.
	again, multi bool
	series       map[uint64]*series
	count        int // series kept
	// order is each metric's series in the order of the previous batch.
	order map[string][]*series
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
		metrics:   map[string]pmetric.Metric{},
		resources: map[string]*resource{},
		scopeName: scopeName, scopeVersion: scopeVersion,
		sum: (*maphash.Hash).Sum64,
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
	r := &resource{key: string(t.buf), series: map[uint64]*series{}, order: map[string][]*series{}}
	t.resources[r.key] = r
	return r
}

// mark records the series of rm, one resource's batch of this scrape, and
// appends to rm a NoRecordedValue point at ts for each series of the
// resource's previous scrape that rm lacks.
func (t *staleness) mark(rm pmetric.ResourceMetrics, ts pcommon.Timestamp) {
	res := t.resourceOf(rm)
	if res.gen == t.gen {
		res.again = true
	}
	res.gen = t.gen
	var h maphash.Hash
	h.SetSeed(t.seed)
	inPlace := 0     // points that matched the previous scrape's series in place
	changed := false // a point out of place, or a metric with another count
	sms := rm.ScopeMetrics()
	for j := range sms.Len() {
		ms := sms.At(j).Metrics()
		for i := range ms.Len() {
			m := ms.At(i)
			name := m.Name()
			if _, ok := t.metrics[name]; !ok {
				t.metrics[name] = metricShape(m)
			}
			prev := res.order[name]
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
				next = append(next, t.see(&h, res, name, dp))
			}
			if next != nil || len(prev) != dps.Len() {
				changed = true
				if next == nil {
					next = prev[:dps.Len()]
				}
				res.order[name] = next
			}
		}
	}
	if res.again || res.multi || (inPlace == res.count && !changed) {
		// Every series came again at its place and no other: none is
		// stale, and the order of every metric is unchanged.
		return
	}
	t.sweep(res, rm, ts)
}

// finish ends the scrape: it returns the markers at ts of the resources
// the scrape did not publish (and forgets them), and of the resources it
// published in several batches.
func (t *staleness) finish(ts pcommon.Timestamp) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for key, res := range t.resources {
		if res.gen == t.gen && !res.again && !res.multi {
			continue
		}
		res.multi, res.again = res.again, false
		rm := md.ResourceMetrics().AppendEmpty()
		decodeAttrs(res.key, rm.Resource().Attributes())
		t.sweep(res, rm, ts)
		if res.count == 0 {
			delete(t.resources, key)
		}
	}
	md.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		return rm.ScopeMetrics().At(0).Metrics().Len() == 0
	})
	return md
}

// sweep appends to rm a NoRecordedValue point at ts for each series of res
// not seen in this scrape, and forgets those series.
func (t *staleness) sweep(res *resource, rm pmetric.ResourceMetrics, ts pcommon.Timestamp) {
	for name, o := range res.order {
		o = slices.DeleteFunc(o, func(s *series) bool { return s.gen != t.gen })
		if len(o) == 0 {
			delete(res.order, name)
		} else {
			res.order[name] = o
		}
	}
	if rm.ScopeMetrics().Len() == 0 {
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(t.scopeName)
		sm.Scope().SetVersion(t.scopeVersion)
	}
	ms := rm.ScopeMetrics().At(0).Metrics()
	var byName map[string]pmetric.NumberDataPointSlice
	for key, s := range res.series {
		var keep *series
		for next := s; next != nil; {
			s, next = next, next.next
			if s.gen == t.gen {
				s.next, keep = keep, s
				continue
			}
			if byName == nil {
				byName = map[string]pmetric.NumberDataPointSlice{}
			}
			dps, ok := byName[s.name]
			if !ok {
				dps = numberPoints(t.metricIn(ms, s.name))
				byName[s.name] = dps
			}
			dp := dps.AppendEmpty()
			decodeAttrs(s.attrs, dp.Attributes())
			dp.SetStartTimestamp(s.start)
			dp.SetTimestamp(ts)
			dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
			res.count--
		}
		if keep == nil {
			delete(res.series, key)
		} else {
			res.series[key] = keep
		}
	}
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

// see records one published point of res as a series of this scrape and
// returns it.
func (t *staleness) see(h *maphash.Hash, res *resource, name string, dp pmetric.NumberDataPoint) *series {
	t.buf = encodeAttrs(t.buf[:0], dp.Attributes())
	h.Reset()
	h.WriteString(name)
	h.WriteByte(0)
	h.Write(t.buf)
	key := t.sum(h)
	for s := res.series[key]; s != nil; s = s.next {
		if s.name == name && s.attrs == string(t.buf) {
			s.gen, s.start = t.gen, dp.StartTimestamp()
			return s
		}
	}
	s := &series{name: name, attrs: string(t.buf), start: dp.StartTimestamp(), gen: t.gen, next: res.series[key]}
	res.series[key] = s
	res.count++
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"encoding/binary"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// seriesList is the series of one metric of one resource, in point order.
type seriesList struct {
	// enc holds every series' encoded attributes: series i is
	// enc[ends[i-1]:ends[i]]. buf is enc while gathering (until seal).
	enc  string
	buf  []byte
	ends []uint32
	// start is every series' start time, unless starts is set.
	start  pcommon.Timestamp
	starts []pcommon.Timestamp
	// gen is the last scrape that published the metric.
	gen uint64
}

func newSeriesList(dps pmetric.NumberDataPointSlice, gen uint64) *seriesList {
	l := &seriesList{gen: gen, ends: make([]uint32, 0, dps.Len())}
	l.appendPoints(dps)
	l.seal()
	return l
}

// appendPoints adds the series of dps, in order, to an unsealed list.
func (l *seriesList) appendPoints(dps pmetric.NumberDataPointSlice) {
	for k := range dps.Len() {
		dp := dps.At(k)
		l.buf = encodeAttrs(l.buf, dp.Attributes())
		l.ends = append(l.ends, uint32(len(l.buf)))
		st := dp.StartTimestamp()
		switch {
		case l.starts != nil:
			l.starts = append(l.starts, st)
		case len(l.ends) == 1:
			l.start = st
		case st != l.start:
			l.starts = make([]pcommon.Timestamp, len(l.ends)-1, cap(l.ends))
			for i := range l.starts {
				l.starts[i] = l.start
			}
			l.starts = append(l.starts, st)
		}
	}
}

// seal ends the gathering: the encoded attributes become one string.
func (l *seriesList) seal() { l.enc, l.buf = string(l.buf), nil }

// unsealed returns a copy of l that more series can be appended to.
func (l *seriesList) unsealed() *seriesList {
	return &seriesList{buf: []byte(l.enc), ends: slices.Clone(l.ends), start: l.start, starts: slices.Clone(l.starts), gen: l.gen}
}

func (l *seriesList) len() int { return len(l.ends) }

func (l *seriesList) attrs(i int) string {
	from := uint32(0)
	if i > 0 {
		from = l.ends[i-1]
	}
	return l.enc[from:l.ends[i]]
}

func (l *seriesList) startOf(i int) pcommon.Timestamp {
	if l.starts != nil {
		return l.starts[i]
	}
	return l.start
}

// sameSeries reports whether dps are l's series in order, taking their starts.
func (l *seriesList) sameSeries(dps pmetric.NumberDataPointSlice) bool {
	n := dps.Len()
	if n != l.len() {
		return false
	}
	uniform := true
	for k := range n {
		dp := dps.At(k)
		if !sameAttrs(l.attrs(k), dp.Attributes()) {
			return false
		}
		uniform = uniform && dp.StartTimestamp() == dps.At(0).StartTimestamp()
	}
	if n == 0 {
		return true
	}
	if uniform {
		l.start, l.starts = dps.At(0).StartTimestamp(), nil
		return true
	}
	l.starts = make([]pcommon.Timestamp, n)
	for k := range n {
		l.starts[k] = dps.At(k).StartTimestamp()
	}
	return true
}

// sameAttrs reports whether attrs encode to enc, without encoding them.
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

// decodeAttrs puts enc's attributes into m; other types come back as text.
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

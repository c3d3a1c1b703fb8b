// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"slices"
	"strings"

	"github.com/prometheus/prometheus/prompb"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"
)

// seriesTemplate is the sorted label set that the points of one metric of
// one resource share, with a hole for each point attribute that becomes a
// label: a point whose attribute keys are those of the template, in the
// same order, with no empty value, is written by filling in its values,
// without naming, merging and sorting its labels again (addMetric's
// general path, which a template must equal: TestTemplateMatchesGeneral).
// The labels around the holes are encoded once. A template is made only
// for points whose labels need no merging: every attribute label name
// distinct and none a resource label's or __name__.
type seriesTemplate struct {
	// keys are the point attribute keys, in the points' order.
	keys []string
	// hole[i] is the hole, in label order, of keys[i]'s label, or -1 for
	// an attribute that is no label (its key is the resource's, or no
	// name).
	hole []int
	// chunks[j] is the encoded TimeSeries.labels fields before hole j
	// (the last one after the last hole); names[j] the encoded name field
	// of hole j's Label.
	chunks, names [][]byte
	fixed         int // the length of all chunks
	// values holds the point's values, by hole, while it is written.
	values []string
}

// newTemplate returns the template of the points of a metric called name
// (its family name) with the attribute keys of attrs, or nil when such
// points need the general path. res is the resource's attributes, resLabels
// its promoted labels, base and external the labels added when missing.
func (t *translator) newTemplate(name string, attrs, res pcommon.Map, resLabels []prompb.Label, base []prompb.Label) *seriesTemplate {
	tp := &seriesTemplate{}
	taken := map[string]bool{"__name__": true}
	for _, l := range resLabels {
		taken[l.Name] = true
	}
	var own []prompb.Label
	ok := true
	attrs.Range(func(k string, v pcommon.Value) bool {
		tp.keys = append(tp.keys, k)
		label := ""
		if _, shadowed := res.Get(k); !t.promote || !shadowed {
			label = t.names.Label(k)
		}
		if label == "" {
			tp.hole = append(tp.hole, -1)
			return true
		}
		if taken[label] {
			ok = false
			return false
		}
		taken[label] = true
		tp.hole = append(tp.hole, len(own))
		own = append(own, prompb.Label{Name: label})
		return true
	})
	if !ok {
		return nil
	}
	lbls := append([]prompb.Label{{Name: "__name__", Value: name}}, resLabels...)
	lbls = append(lbls, own...)
	for _, add := range [][]prompb.Label{base, t.external} {
		for _, a := range add {
			if !taken[a.Name] {
				taken[a.Name] = true
				lbls = append(lbls, a)
			}
		}
	}
	// Sort, then encode the labels between the holes.
	order := make([]int, len(lbls))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(lbls[a].Name, lbls[b].Name) })
	first := 1 + len(resLabels) // where own starts in lbls
	holeOf := make([]int, len(own))
	var chunk []byte
	for _, from := range order {
		if from < first || from >= first+len(own) {
			chunk = appendLabelField(chunk, lbls[from])
			continue
		}
		holeOf[from-first] = len(tp.names)
		tp.chunks = append(tp.chunks, chunk)
		tp.names = append(tp.names, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), lbls[from].Name))
		tp.fixed += len(chunk)
		chunk = nil
	}
	tp.chunks = append(tp.chunks, chunk)
	tp.fixed += len(chunk)
	for i, h := range tp.hole {
		if h >= 0 {
			tp.hole[i] = holeOf[h]
		}
	}
	tp.values = make([]string, len(tp.names))
	return tp
}

// appendLabelField appends l as a TimeSeries.labels field.
func appendLabelField(b []byte, l prompb.Label) []byte {
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(labelSize(l)))
	if l.Name != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, l.Name)
	}
	if l.Value != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, l.Value)
	}
	return b
}

// fill takes the values of a point with the attributes attrs, and returns
// false when the point does not fit the template (other keys, or an empty
// value).
func (tp *seriesTemplate) fill(attrs pcommon.Map) bool {
	if attrs.Len() != len(tp.keys) {
		return false
	}
	i, ok := 0, true
	attrs.Range(func(k string, v pcommon.Value) bool {
		if k != tp.keys[i] {
			ok = false
			return false
		}
		if h := tp.hole[i]; h >= 0 {
			s := v.Str()
			if v.Type() != pcommon.ValueTypeStr {
				s = v.AsString()
			}
			if s == "" {
				ok = false
				return false
			}
			tp.values[h] = s
		}
		i++
		return true
	})
	return ok
}

// labelsSize is the encoded size of the TimeSeries.labels fields of the
// filled template.
func (tp *seriesTemplate) labelsSize() int {
	n := tp.fixed
	for j, v := range tp.values {
		n += fieldSize(len(tp.names[j]) + 1 + protowire.SizeBytes(len(v)))
	}
	return n
}

// appendLabels appends the TimeSeries.labels fields of the filled template.
func (tp *seriesTemplate) appendLabels(b []byte) []byte {
	for j, v := range tp.values {
		b = append(b, tp.chunks[j]...)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(len(tp.names[j])+1+protowire.SizeBytes(len(v))))
		b = append(b, tp.names[j]...)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, v)
	}
	return append(b, tp.chunks[len(tp.values)]...)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"slices"
	"strings"
	"sync"

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

// fill puts in values (one per hole) the values of a point with the
// attributes attrs, and returns false when the point does not fit the
// template (other keys, or an empty value).
func (tp *seriesTemplate) fill(attrs pcommon.Map, values []string) bool {
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
			values[h] = s
		}
		i++
		return true
	})
	return ok
}

// labelsSize is the encoded size of the TimeSeries.labels fields of the
// template filled with values.
func (tp *seriesTemplate) labelsSize(values []string) int {
	n := tp.fixed
	for j, v := range values {
		n += fieldSize(len(tp.names[j]) + 1 + protowire.SizeBytes(len(v)))
	}
	return n
}

// appendLabels appends the TimeSeries.labels fields of the template filled
// with values.
func (tp *seriesTemplate) appendLabels(b []byte, values []string) []byte {
	for j, v := range values {
		b = append(b, tp.chunks[j]...)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(len(tp.names[j])+1+protowire.SizeBytes(len(v))))
		b = append(b, tp.names[j]...)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, v)
	}
	return append(b, tp.chunks[len(values)]...)
}

// templateCache keeps the templates made for the batches before, by what a
// template depends on (templateKey): the series of a host are the same from
// one scrape to the next, and making a template anew for every metric of
// every resource of every batch was 19 % of a 16x64 batch's translation
// (BenchmarkTranslate). A template no batch used since the sweep before
// last (between sweepCalls and twice that many batches) is let go,
// so the cache holds about the templates of the series that still exist;
// and it starts anew past maxTemplates, for a source whose resource
// attributes churn faster than that. Safe for concurrent use; a template
// is not changed once made.
type templateCache struct {
	mu    sync.Mutex
	byKey map[string]*cachedTemplate
	calls uint64 // translate calls so far
}

// cachedTemplate is a template, or nil for points that need the general
// path, and the translate call that last used it.
type cachedTemplate struct {
	tp   *seriesTemplate
	used uint64
}

// sweepCalls is how many batches an unused template is kept for (a
// translate call or, with merge_window, each batch added): with the
// receiver's batch per instance, about 4 scrapes at 16x64 (17 batches a
// scrape) and 1 to 2 at 64x1024 (65), where every instance's templates
// are used at each scrape.
const sweepCalls = 64

// maxTemplates bounds the cache: a 64x1024 host has about 2,600 templates
// (64 resources of about 40 metrics).
const maxTemplates = 50_000

// tick counts a batch, and every sweepCalls batches lets go of the
// templates unused since the sweep before.
func (c *templateCache) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls%sweepCalls != 0 {
		return
	}
	for k, e := range c.byKey {
		if e.used+sweepCalls < c.calls {
			delete(c.byKey, k)
		}
	}
}

// get returns the template of key, made by newTemplate when there is none.
func (c *templateCache) get(key []byte, newTemplate func() *seriesTemplate) *seriesTemplate {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[string(key)]; ok {
		e.used = c.calls
		return e.tp
	}
	if c.byKey == nil || len(c.byKey) >= maxTemplates {
		c.byKey = map[string]*cachedTemplate{}
	}
	tp := newTemplate()
	c.byKey[string(key)] = &cachedTemplate{tp: tp, used: c.calls}
	return tp
}

// templateKey appends to k all that newTemplate's result depends on for
// the points of a metric called name whose first point has the attributes
// attrs: the name, the resource's labels and the base labels (names and
// values), and the attribute keys in order, each marked when the resource
// has it too (with promotion, such a key is no label). The external labels
// are the translator's own. Every string is length-prefixed, so that two
// different inputs never give the same key.
func (t *translator) templateKey(k []byte, name string, attrs, res pcommon.Map, resLabels, base []prompb.Label) []byte {
	k = protowire.AppendString(k, name)
	for _, ls := range [][]prompb.Label{resLabels, base} {
		k = protowire.AppendVarint(k, uint64(len(ls)))
		for _, l := range ls {
			k = protowire.AppendString(protowire.AppendString(k, l.Name), l.Value)
		}
	}
	attrs.Range(func(key string, _ pcommon.Value) bool {
		k = protowire.AppendString(k, key)
		shadowed := byte(0)
		if t.promote {
			if _, ok := res.Get(key); ok {
				shadowed = 1
			}
		}
		k = append(k, shadowed)
		return true
	})
	return k
}

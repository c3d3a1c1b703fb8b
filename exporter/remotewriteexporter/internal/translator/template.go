// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/prompb"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"
)

// seriesTemplate is the encoded, sorted labels a metric's points share,
// with a hole per attribute label: a point of the same keys is written by
// filling in its values, not by naming and sorting its labels again. It
// must equal the general path (TestTemplateMatchesGeneral), so it is made
// only for labels that need no merging.
type seriesTemplate struct {
	keys []string
	// hole[i] is keys[i]'s hole in label order, -1 for no label.
	hole []int
	// chunks[j] are the encoded labels before hole j; names[j] its name field.
	chunks, names [][]byte
	fixed         int // the length of all chunks
}

// newTemplate returns the template for points with attrs' keys, or nil
// when they need the general path.
func (t *labeling) newTemplate(name string, attrs, res pcommon.Map, resLabels []prompb.Label, base []prompb.Label) *seriesTemplate {
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

// fill puts attrs' values in values; false when the point does not fit.
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

func (tp *seriesTemplate) labelsSize(values []string) int {
	n := tp.fixed
	for j, v := range values {
		n += fieldSize(len(tp.names[j]) + 1 + protowire.SizeBytes(len(v)))
	}
	return n
}

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

// templateCache keeps templates between batches, as a host's series stay
// the same (docs/performance-pipelines.md); unused ones are swept, and it
// starts anew past maxTemplates. Templates are not changed once made.
type templateCache struct {
	mu    sync.Mutex
	byKey map[string]*cachedTemplate
	calls uint64 // translate calls so far
}

// cachedTemplate's tp is nil for points that need the general path.
type cachedTemplate struct {
	tp   *seriesTemplate
	used uint64
}

// sweepCalls is how many batches an unused template is kept for: a few scrapes.
const sweepCalls = 64

// maxTemplates is far above a large host's templates.
const maxTemplates = 50_000

// tick counts a batch and sweeps every sweepCalls.
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

// templateKey appends all newTemplate depends on, strings length-prefixed
// so that different inputs never give the same key.
func (t *labeling) templateKey(k []byte, name string, attrs, res pcommon.Map, resLabels, base []prompb.Label) []byte {
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

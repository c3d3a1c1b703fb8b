// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package promname // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// ResourceToTelemetrySettings is contrib's resource_to_telemetry_conversion.
type ResourceToTelemetrySettings struct {
	// Enabled makes resource attributes labels (ernic_id and role in the metric contract).
	Enabled bool `mapstructure:"enabled"`

	_ struct{}
}

// Identifying keys become job and instance, not labels of their own (Prometheus' OTLP translation).
func Identifying(key string) bool {
	switch key {
	case "service.name", "service.namespace", "service.instance.id":
		return true
	}
	return false
}

// Label is one label of a series.
type Label struct {
	Name, Value string
}

// PointLabels resolves one resource's points' labels, for one goroutine. As in contrib,
// a promoted resource attribute wins over a point's, and keys that make the
// same label join their values with ";" (Prometheus refuses a label twice).
type PointLabels struct {
	n *Namer
	// lastKey skips hashing: almost every point repeats the key before.
	keys    map[string]pointKey
	lastKey string
	last    pointKey
	res     pcommon.Map
	promote bool
	// skipEmpty leaves out attributes with an empty value.
	skipEmpty bool
	resLabels []Label
	out       []Label
	// resChanged: the last Of joined a point's value to a resource label.
	resChanged bool
}

type pointKey struct {
	name  string
	inRes bool
}

// NewPointLabels returns the resolver of res's points; skipEmpty: an empty label is no label.
func (n *Namer) NewPointLabels(res pcommon.Map, promote, skipEmpty bool) *PointLabels {
	p := &PointLabels{n: n, keys: map[string]pointKey{}, res: res, promote: promote, skipEmpty: skipEmpty}
	if promote {
		res.Range(func(k string, v pcommon.Value) bool {
			if !Identifying(k) {
				p.resLabels = p.add(p.resLabels, n.Label(k), v)
			}
			return true
		})
	}
	return p
}

func (p *PointLabels) key(k string) pointKey {
	if k == p.lastKey && p.lastKey != "" {
		return p.last
	}
	pk, ok := p.keys[k]
	if !ok {
		pk.name = p.n.Label(k)
		if p.promote {
			_, pk.inRes = p.res.Get(k)
		}
		p.keys[k] = pk
	}
	p.lastKey, p.last = k, pk
	return pk
}

// ResourceChanged reports whether the last Of joined a value to a resource label.
func (p *PointLabels) ResourceChanged() bool { return p.resChanged }

// Resource returns the resource's labels (nil when not promoted).
func (p *PointLabels) Resource() []Label { return p.resLabels }

// Of returns a point's labels, valid until the next call.
func (p *PointLabels) Of(attrs pcommon.Map) []Label {
	p.out = append(p.out[:0], p.resLabels...)
	p.resChanged = false
	for k, v := range attrs.All() {
		if pk := p.key(k); !pk.inRes {
			p.out = p.add(p.out, pk.name, v)
		}
	}
	return p.out
}

// add appends name=v to out, or joins v to the label of that name.
func (p *PointLabels) add(out []Label, name string, v pcommon.Value) []Label {
	s := ValueString(v)
	if s == "" && p.skipEmpty {
		return out
	}
	if name == "" {
		return out
	}
	for i := range out {
		if out[i].Name == name {
			if out[i].Value != s {
				out[i].Value += ";" + s
				p.resChanged = p.resChanged || i < len(p.resLabels)
			}
			return out
		}
	}
	return append(out, Label{Name: name, Value: s})
}

// ValueString returns an attribute value as label text.
func ValueString(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}

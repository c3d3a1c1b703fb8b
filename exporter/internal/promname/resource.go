// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package promname // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// ResourceToTelemetrySettings is the resource_to_telemetry_conversion
// setting, named and shaped as contrib's Prometheus exporters have it.
type ResourceToTelemetrySettings struct {
	// Enabled makes every attribute of a resource a label of each of its
	// series: the receiver's ernic.id and role, which the metric contract
	// has as the labels ernic_id and role, and whatever a processor adds
	// (host.name from resourcedetection, for example).
	Enabled bool `mapstructure:"enabled"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Identifying reports whether a resource attribute is one of those that
// name a Prometheus target, service.name, service.namespace and
// service.instance.id: they become the job and instance labels (the
// remote-write exporter, Prometheus' own OTLP receiver) and are not
// promoted as labels of their own, as Prometheus' OTLP translation does.
func Identifying(key string) bool {
	switch key {
	case "service.name", "service.namespace", "service.instance.id":
		return true
	}
	return false
}

// Label is one label of a series: a translated name and the attribute's
// value as text (pcommon.Value.AsString).
type Label struct {
	Name, Value string
}

// PointLabels resolves the labels of the points of one resource: the
// resource's attributes when promoted (but the Identifying ones), then each point's own, except one
// whose key the resource has (the resource's value wins, as contrib's
// resource_to_telemetry_conversion copies resource attributes over point
// attributes). An attribute whose key cannot be a label name is left out.
// Attributes whose keys become the same label ("a.b", "a_b") make one label
// with their values joined by ";", as contrib's exporters do: a label twice
// would make a Prometheus server refuse the series. The resource's labels
// are resolved once, and a point's without allocating unless names
// collide. A PointLabels is used by one goroutine.
type PointLabels struct {
	n *Namer
	// keys caches what each attribute key of a point becomes; lastKey
	// and last are the previous lookup and its result, which almost every
	// point repeats (one attribute, qp or counter): no hashing for those.
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

// pointKey is what a point attribute's key becomes: its label name ("" when
// the key cannot be one) and whether the resource has the key (when
// promoted, the resource's value wins and the point's is left out).
type pointKey struct {
	name  string
	inRes bool
}

// NewPointLabels returns the label resolver of the points of a resource
// with the attributes res; promote is resource_to_telemetry_conversion,
// skipEmpty leaves out attributes whose value is empty (remote write: an
// empty label is no label).
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

// key returns what the point attribute key k becomes.
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

// ResourceChanged reports whether the labels the last Of returned do not
// begin with Resource() as it is: a point attribute joined its value to a
// resource label.
func (p *PointLabels) ResourceChanged() bool { return p.resChanged }

// Resource returns the resource's labels, the first labels of every point
// unless a point's attribute joined its value to one (Of); nil when the
// resource is not promoted.
func (p *PointLabels) Resource() []Label { return p.resLabels }

// Of returns the labels of a point with the attributes attrs, in the order
// of the resource's and then the point's attributes. The slice is valid
// until the next call.
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

// add appends the label name=v to out, or joins its value to the label of
// that name already in out; nothing for name "" (a key that cannot be a
// label).
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

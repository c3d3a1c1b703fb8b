// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

import (
	"slices"
	"strings"

	"github.com/prometheus/prometheus/prompb"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
)

// labeling is what names a point's labels, on the general path and in the
// templates alike.
type labeling struct {
	external []prompb.Label // sorted by name
	names    *promname.Namer
	// promote is resource_to_telemetry_conversion.
	promote bool
}

// labelOrder reuses one series' label order while the names stay the same:
// a metric's series share their label names, and sorting each cost much.
type labelOrder struct {
	names []string // the label names the order is for, as they came
	perm  []int    // perm[i]: the index in names of the i-th name by order
	out   []prompb.Label
}

// sorted returns lbls sorted stably by name, valid until the next call.
func (o *labelOrder) sorted(lbls []prompb.Label) []prompb.Label {
	same := len(lbls) == len(o.names)
	for i := 0; same && i < len(lbls); i++ {
		same = lbls[i].Name == o.names[i]
	}
	if !same {
		o.names, o.perm = o.names[:0], o.perm[:0]
		for i, l := range lbls {
			o.names = append(o.names, l.Name)
			o.perm = append(o.perm, i)
		}
		slices.SortStableFunc(o.perm, func(a, b int) int { return strings.Compare(o.names[a], o.names[b]) })
	}
	o.out = o.out[:0]
	for _, i := range o.perm {
		o.out = append(o.out, lbls[i])
	}
	return o.out
}

// appendMissing appends add's labels not in dst[first:]: attributes win.
func appendMissing(dst []prompb.Label, first int, add []prompb.Label) []prompb.Label {
	for _, a := range add {
		if !slices.ContainsFunc(dst[first:], func(l prompb.Label) bool { return l.Name == a.Name }) {
			dst = append(dst, a)
		}
	}
	return dst
}

func cmpLabel(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) }

func hasDuplicate(l []prompb.Label) bool {
	for i := 1; i < len(l); i++ {
		if l[i].Name == l[i-1].Name {
			return true
		}
	}
	return false
}

// mergeDuplicates joins the values of equal names ("a.b", "a_b") with ";", as contrib does.
func mergeDuplicates(l []prompb.Label) []prompb.Label {
	out := l[:0]
	for _, x := range l {
		if n := len(out); n > 0 && out[n-1].Name == x.Name {
			if out[n-1].Value != x.Value {
				out[n-1].Value += ";" + x.Value
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

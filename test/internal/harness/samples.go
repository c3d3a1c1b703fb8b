// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"math"
	"strings"

	"github.com/prometheus/common/model"
)

// SeriesKey is a sample's family and labels without job and instance, the
// labels a backend adds for the host.
func SeriesKey(m model.Metric) string {
	c := m.Clone()
	delete(c, "job")
	delete(c, "instance")
	return c.String()
}

// Samples is the samples of m by "series@timestamp", the series by
// SeriesKey without the labels named in drop, with their values.
func Samples(m model.Matrix, drop ...model.LabelName) map[string]float64 {
	out := map[string]float64{}
	for _, ss := range m {
		l := ss.Metric.Clone()
		for _, d := range drop {
			delete(l, d)
		}
		k := SeriesKey(l)
		for _, p := range ss.Values {
			out[k+"@"+p.Timestamp.String()] = float64(p.Value)
		}
	}
	return out
}

// FamilyOf is the metric name of a Samples key.
func FamilyOf(key string) string {
	return key[:strings.IndexAny(key+"{@", "{@")]
}

// Missing compares the samples a backend holds (have) with the reference
// (want): the keys of want that have no sample in have, and those whose
// value differs (NaN equals NaN: a stale marker or a NaN the host sent).
func Missing(want, have map[string]float64) (missing, differ []string) {
	for k, w := range want {
		h, ok := have[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case h != w && !(math.IsNaN(h) && math.IsNaN(w)):
			differ = append(differ, k)
		}
	}
	return missing, differ
}

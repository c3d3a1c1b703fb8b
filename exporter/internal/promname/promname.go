// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package promname translates OTel names into Prometheus names as contrib's
// Prometheus exporters do (otlptranslator's UnderscoreEscapingWithSuffixes).
package promname // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"

import (
	"sync"

	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Type is the Prometheus type of a family.
type Type string

// The types a number metric becomes.
const (
	Counter Type = "counter" // a monotonic cumulative sum
	Gauge   Type = "gauge"   // a gauge, or a cumulative sum that is not monotonic
)

// Namer caches translations: every batch has the same few names. Safe for concurrent use.
type Namer struct {
	mu      sync.Mutex
	metric  otlptranslator.MetricNamer
	label   otlptranslator.LabelNamer
	metrics map[otlptranslator.Metric]string
	labels  map[string]string
}

// New returns an empty Namer.
func New() *Namer {
	return &Namer{
		metric: otlptranslator.NewMetricNamer("", otlptranslator.UnderscoreEscapingWithSuffixes),
		// As both of contrib's Prometheus exporters: "k..v" -> "k__v".
		label:   otlptranslator.LabelNamer{PreserveMultipleUnderscores: true},
		metrics: map[otlptranslator.Metric]string{},
		labels:  map[string]string{},
	}
}

// Family returns m's family name, type and points; false when m has no number family.
func (n *Namer) Family(m pmetric.Metric) (name string, typ Type, points pmetric.NumberDataPointSlice, ok bool) {
	key := otlptranslator.Metric{Name: m.Name(), Unit: m.Unit()}
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		key.Type, typ, points = otlptranslator.MetricTypeGauge, Gauge, m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		s := m.Sum()
		switch {
		case s.AggregationTemporality() != pmetric.AggregationTemporalityCumulative:
			return "", "", points, false
		case s.IsMonotonic():
			key.Type, typ = otlptranslator.MetricTypeMonotonicCounter, Counter
		default:
			key.Type, typ = otlptranslator.MetricTypeNonMonotonicCounter, Gauge
		}
		points = s.DataPoints()
	default:
		return "", "", points, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	name, seen := n.metrics[key]
	if !seen {
		var err error
		if name, err = n.metric.Build(key); err != nil {
			name = ""
		}
		n.metrics[key] = name
	}
	return name, typ, points, name != ""
}

// Label returns an attribute key's label name, "" when it cannot be one (or is __name__).
func (n *Namer) Label(key string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.labels[key]
	if !ok {
		var err error
		if l, err = n.label.Build(key); err != nil || l == "__name__" {
			l = ""
		}
		n.labels[key] = l
	}
	return l
}

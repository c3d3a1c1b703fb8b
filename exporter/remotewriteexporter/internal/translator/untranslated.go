// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// untranslated counts the points left out, by why; an array, so that
// counting allocates nothing.
type untranslated [numReasons]int

const (
	deltaSums = iota
	histograms
	exponentialHistograms
	summaries
	badNames
	noValue
	tooLarge
	numReasons
)

var reasonNames = [numReasons]string{
	deltaSums:             "delta sums",
	histograms:            "histograms",
	exponentialHistograms: "exponential histograms",
	summaries:             "summaries",
	badNames:              "metrics whose name cannot be translated",
	noValue:               "points without a value",
	tooLarge:              "requests of 4 GiB or more",
}

// metricRefused counts the points of a metric the exporter cannot take.
func (u *untranslated) metricRefused(m pmetric.Metric) {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		u[histograms] += m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		u[exponentialHistograms] += m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		u[summaries] += m.Summary().DataPoints().Len()
	case pmetric.MetricTypeSum:
		if m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
			u[deltaSums] += m.Sum().DataPoints().Len()
		} else {
			u[badNames] += m.Sum().DataPoints().Len()
		}
	case pmetric.MetricTypeGauge:
		u[badNames] += m.Gauge().DataPoints().Len()
	default:
		u[badNames]++
	}
}

func (u *untranslated) total() int {
	n := 0
	for _, c := range u {
		n += c
	}
	return n
}

// minus is what u counts beyond before.
func (u untranslated) minus(before untranslated) untranslated {
	for i := range u {
		u[i] -= before[i]
	}
	return u
}

// UntranslatedError counts the points left out, by type.
type UntranslatedError struct{ counts untranslated }

// Points counts the points left out.
func (e *UntranslatedError) Points() int { return e.counts.total() }

// err is nil when no point was left out.
func (u untranslated) err() error {
	if u.total() == 0 {
		return nil
	}
	return &UntranslatedError{counts: u}
}

func (e *UntranslatedError) Error() string {
	var parts []string
	for i, c := range e.counts {
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%d of %s", c, reasonNames[i]))
		}
	}
	return fmt.Sprintf("%d points not sent (%s): remote_write takes gauges and cumulative sums only", e.counts.total(), strings.Join(parts, ", "))
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// untranslated counts the points a translation left out, by why: the
// exporter takes gauges and cumulative sums (all the ernic receiver
// emits); every other type is refused, counted and logged, never sent
// half translated. A fixed array, so that counting allocates nothing.
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

// metricRefused counts the points of m, a metric of a type the exporter
// does not take or with a name it cannot translate.
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

// total is the number of points left out.
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

// untranslatedError says how many points a translation left out and of
// which types.
type untranslatedError struct{ counts untranslated }

// err is u as an error; nil when no point was left out.
func (u untranslated) err() error {
	if u.total() == 0 {
		return nil
	}
	return &untranslatedError{counts: u}
}

func (e *untranslatedError) Error() string {
	var parts []string
	for i, c := range e.counts {
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%d of %s", c, reasonNames[i]))
		}
	}
	return fmt.Sprintf("%d points not sent (%s): remote_write takes gauges and cumulative sums only", e.counts.total(), strings.Join(parts, ", "))
}

// reportUntranslated logs err, a translation's error, through the report.
func (e *remoteWrite) reportUntranslated(err error) {
	if ue, ok := err.(*untranslatedError); ok { //nolint:errorlint // the translator returns it unwrapped
		e.report.Untranslated(err, ue.counts.total())
	}
}

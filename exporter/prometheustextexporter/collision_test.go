// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Two attributes whose names become the same label ("a.b" and "a_b") make
// one label with the values joined ("x;y"), as contrib does; a label twice
// would make a Prometheus scrape refuse the whole exposition.
func TestCollidingLabelNamesMerged(t *testing.T) {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("x")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetIntValue(1)
	dp.Attributes().PutStr("a.b", "x")
	dp.Attributes().PutStr("a_b", "y")
	e := newTestExporter(t)
	require.NoError(t, e.ConsumeMetrics(context.Background(), md))
	got, _ := get(t, e, false)
	p := expfmt.NewTextParser(model.LegacyValidation)
	_, err := p.TextToMetricFamilies(strings.NewReader(got))
	require.NoError(t, err, got)
}

// A gauge and a counter whose names translate to the same family.
func TestGaugeAndCounterOfOneFamilyParse(t *testing.T) {
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName("foo_total")
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(-5)
	c := ms.AppendEmpty()
	c.SetName("foo")
	s := c.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	s.DataPoints().AppendEmpty().SetIntValue(3)
	e := newTestExporter(t)
	require.NoError(t, e.ConsumeMetrics(context.Background(), md))
	got, _ := get(t, e, false)
	t.Log(got)
	p := expfmt.NewTextParser(model.LegacyValidation)
	_, err := p.TextToMetricFamilies(strings.NewReader(got))
	require.NoError(t, err, got)
}

// Concurrent ConsumeMetrics and GETs (run with -race); every GET parses.
func TestConcurrentConsumeAndGet(t *testing.T) {
	e := newTestExporter(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			_ = e.ConsumeMetrics(context.Background(), batch(string(rune('a'+i%5)), int64(i)))
		}
	}()
	for range 100 {
		got, _ := get(t, e, true)
		p := expfmt.NewTextParser(model.LegacyValidation)
		_, err := p.TextToMetricFamilies(strings.NewReader(got))
		require.NoError(t, err)
	}
	<-done
}

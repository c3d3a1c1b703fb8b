// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Attributes whose names translate to the same label, in an order that is
// already sorted, make one label with the values joined, as contrib does (a
// label twice makes a receiver refuse the whole request).
func TestCollidingLabelNamesMerged(t *testing.T) {
	for name, attrs := range map[string][][2]string{
		"a.b then a_b":       {{"a.b", "x"}, {"a_b", "y"}},
		"same values":        {{"a.b", "x"}, {"a_b", "x"}},
		"attribute __name__": {{"__name__", "evil"}},
	} {
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("x")
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetIntValue(1)
		for _, a := range attrs {
			dp.Attributes().PutStr(a[0], a[1])
		}
		req, err := New(DefaultSettings()).Translate(md)
		require.NoError(t, err)
		raw, err := snappy.Decode(nil, req.Payloads[0])
		require.NoError(t, err)
		var wr prompb.WriteRequest
		require.NoError(t, wr.Unmarshal(raw))
		for _, ts := range wr.Timeseries {
			seen := map[string]bool{}
			for _, l := range ts.Labels {
				assert.False(t, seen[l.Name], "%s: label %q twice in %v", name, l.Name, ts.Labels)
				seen[l.Name] = true
			}
		}
	}
}

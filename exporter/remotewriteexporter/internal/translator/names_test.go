// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"sort"
	"testing"
	"time"

	prw "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/prometheusremotewrite"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func TestNamesMatchContrib(t *testing.T) {
	for _, c := range [][3]string{{"a__b", "", "k__v"}, {"a..b", "By", "k..v"}, {"_x", "s", "_k"}, {"x", "{req}/s", "__k"}, {"x", "1", "k"}, {"x.ratio", "1", "k"}, {"x_total", "", "k"}, {"x", "By", "k"}, {"x_bytes", "By", "k"}, {"métrique", "", "ünï"}, {"x", "ms", "k"}, {"x", "%", "k"}} {
		for _, mono := range []bool{false, true} {
			md := pmetric.NewMetrics()
			m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			m.SetName(c[0])
			m.SetUnit(c[1])
			var dp pmetric.NumberDataPoint
			if mono {
				s := m.SetEmptySum()
				s.SetIsMonotonic(true)
				s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
				dp = s.DataPoints().AppendEmpty()
			} else {
				dp = m.SetEmptyGauge().DataPoints().AppendEmpty()
			}
			dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 0)))
			dp.SetIntValue(1)
			dp.Attributes().PutStr(c[2], "v")
			cfg := DefaultSettings()
			req, _ := New(cfg).Translate(md)
			var g, w []string
			for k := range decoded(t, req.Payloads) {
				g = append(g, k)
			}
			want, _ := prw.FromMetrics(md, prw.Settings{TranslationStrategy: "UnderscoreEscapingWithSuffixes", AddMetricSuffixes: true, DisableScopeInfo: true, DisableTargetInfo: true})
			for _, ts := range want {
				w = append(w, labelsText(ts.Labels))
			}
			sort.Strings(g)
			sort.Strings(w)
			if len(g) != len(w) || (len(g) > 0 && g[0] != w[0]) {
				t.Errorf("%q %q %q mono=%v\n ours    %v\n contrib %v", c[0], c[1], c[2], mono, g, w)
			}
		}
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"sort"
	"testing"
	"time"

	prw "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/prometheusremotewrite"
	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func edgeBatch(res map[string]string, attrs [][2]string) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	for k, v := range res {
		rm.Resource().Attributes().PutStr(k, v)
	}
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("x")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 0)))
	dp.SetIntValue(1)
	for _, a := range attrs {
		dp.Attributes().PutStr(a[0], a[1])
	}
	return md
}

// Label names that collide, empty values, reserved and invalid names give
// the series contrib's translator gives, but for one case: a point's own
// job attribute wins over the job of service.name (job and instance are
// added where the point has no label of the name; contrib's win).
func TestTranslateEdgeCasesMatchContrib(t *testing.T) {
	ours := map[string][]string{"attr job vs service": {`__name__="x",job="attr",`}}
	for name, tc := range map[string]struct {
		res   map[string]string
		attrs [][2]string
		ext   map[string]string
	}{
		"collide sorted":      {nil, [][2]string{{"a.b", "x"}, {"a_b", "y"}}, nil},
		"collide unsorted":    {nil, [][2]string{{"z", "1"}, {"a.b", "x"}, {"a_b", "y"}}, nil},
		"collide same value":  {nil, [][2]string{{"a.b", "x"}, {"a_b", "x"}}, nil},
		"collide one empty":   {nil, [][2]string{{"a.b", ""}, {"a_b", "y"}}, nil},
		"empty attr vs ext":   {nil, [][2]string{{"role", ""}}, map[string]string{"role": "ext"}},
		"attr job vs service": {map[string]string{"service.name": "svc"}, [][2]string{{"job", "attr"}}, nil},
		"attr __name__":       {nil, [][2]string{{"__name__", "evil"}}, nil},
		"attr __foo":          {nil, [][2]string{{"__foo", "v"}}, nil},
		"digit key":           {nil, [][2]string{{"0abc", "v"}}, nil},
		"ns without name":     {map[string]string{"service.namespace": "ns", "service.instance.id": "i"}, nil, nil},
		"ext bad name":        {nil, nil, map[string]string{"host-name": "h"}},
	} {
		cfg := DefaultSettings()
		cfg.ExternalLabels = tc.ext
		md := edgeBatch(tc.res, tc.attrs)
		req, err := New(cfg).Translate(md)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := decoded(t, req.Payloads)
		want, _ := prw.FromMetrics(md, prw.Settings{ExternalLabels: tc.ext, TranslationStrategy: "UnderscoreEscapingWithSuffixes", AddMetricSuffixes: true, DisableScopeInfo: true, DisableTargetInfo: true})
		var g, w []string
		for k := range got {
			g = append(g, k)
		}
		for _, ts := range want {
			w = append(w, labelsText(ts.Labels))
		}
		sort.Strings(g)
		sort.Strings(w)
		if o, ok := ours[name]; ok {
			assert.NotEqual(t, w, o, "%s: contrib's series", name)
			w = o
		}
		assert.Equal(t, w, g, name)
	}
}

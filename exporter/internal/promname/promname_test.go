// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package promname

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func TestFamily(t *testing.T) {
	n := New()
	for _, tc := range []struct {
		build    func(m pmetric.Metric)
		name     string
		typ      Type
		ok       bool
		metric   string
		unit     string
		wantDesc string
	}{
		{func(m pmetric.Metric) { m.SetEmptyGauge() }, "ernic_instance_uptime_seconds", Gauge, true, "ernic.instance.uptime", "s", "gauge with a unit"},
		{func(m pmetric.Metric) {
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		}, "ernic_rdma_bytes_sent_total", Counter, true, "ernic.rdma.bytes.sent", "By", "counter: no repeated unit, _total"},
		{func(m pmetric.Metric) {
			m.SetEmptySum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		}, "ernic_qp_count", Gauge, true, "ernic.qp.count", "", "non-monotonic sum: gauge"},
		{func(m pmetric.Metric) {
			m.SetEmptySum().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		}, "", "", false, "ernic.delta", "", "delta sum: none"},
		{func(m pmetric.Metric) { m.SetEmptyHistogram() }, "", "", false, "ernic.hist", "s", "histogram: none"},
	} {
		m := pmetric.NewMetric()
		m.SetName(tc.metric)
		m.SetUnit(tc.unit)
		tc.build(m)
		name, typ, _, ok := n.Family(m)
		assert.Equal(t, tc.ok, ok, tc.wantDesc)
		assert.Equal(t, tc.name, name, tc.wantDesc)
		assert.Equal(t, tc.typ, typ, tc.wantDesc)
	}
	assert.Equal(t, "ernic_id", n.Label("ernic.id"))
	assert.Equal(t, "key_1st", n.Label("1st"))
	assert.Equal(t, "", n.Label(""))
}

// A point's labels: the resource's first when promoted, a point attribute
// the resource has is left out, names that collide are joined, keys that
// cannot be names are dropped, empty values kept or skipped.
func TestPointLabels(t *testing.T) {
	n := New()
	res := pcommon.NewMap()
	res.PutStr("ernic.id", "3")
	res.PutStr("role", "worker")
	attrs := pcommon.NewMap()
	attrs.PutStr("qp", "17")
	attrs.PutStr("role", "ignored")
	attrs.PutStr("a.b", "x")
	attrs.PutStr("a_b", "y")
	attrs.PutStr("", "dropped")
	attrs.PutStr("empty", "")
	attrs.PutInt("n", 5)

	p := n.NewPointLabels(res, true, false)
	assert.Equal(t, []Label{{"ernic_id", "3"}, {"role", "worker"}, {"qp", "17"}, {"a_b", "x;y"}, {"empty", ""}, {"n", "5"}}, p.Of(attrs))
	// The next point does not see the last one's merge.
	one := pcommon.NewMap()
	one.PutStr("a_b", "z")
	assert.Equal(t, []Label{{"ernic_id", "3"}, {"role", "worker"}, {"a_b", "z"}}, p.Of(one))

	p = n.NewPointLabels(res, false, true)
	assert.Equal(t, []Label{{"qp", "17"}, {"role", "ignored"}, {"a_b", "x;y"}, {"n", "5"}}, p.Of(attrs))

	// A resource label merged with a point's keeps the resource's intact
	// for the next point.
	clash := pcommon.NewMap()
	clash.PutStr("ernic_id", "9")
	p = n.NewPointLabels(res, true, false)
	assert.Equal(t, []Label{{"ernic_id", "3;9"}, {"role", "worker"}}, p.Of(clash))
	assert.True(t, p.ResourceChanged(), "ernic_id joined the point's value")
	assert.Equal(t, []Label{{"ernic_id", "3"}, {"role", "worker"}}, p.Of(pcommon.NewMap()))
	assert.False(t, p.ResourceChanged())
	// The same value joins nothing: the resource's labels stand as they are.
	same := pcommon.NewMap()
	same.PutStr("ernic_id", "3")
	assert.Equal(t, []Label{{"ernic_id", "3"}, {"role", "worker"}}, p.Of(same))
	assert.False(t, p.ResourceChanged())

	// Keys resolved once are resolved the same way again, whichever key
	// came last (the resolver keeps the previous point's key apart).
	for _, k := range []string{"a.b", "qp", "qp", "a.b", "role", "bad key!", "a.b"} {
		m := pcommon.NewMap()
		m.PutStr(k, "v")
		want := []Label{{"ernic_id", "3"}, {"role", "worker"}}
		switch k {
		case "a.b":
			want = append(want, Label{"a_b", "v"})
		case "qp":
			want = append(want, Label{"qp", "v"})
		case "bad key!":
			want = append(want, Label{"bad_key_", "v"})
		}
		assert.Equal(t, want, p.Of(m), k)
	}

	assert.Zero(t, testing.AllocsPerRun(10, func() { p.Of(one) }), "no allocation without a collision")
}

package promname

import (
	"testing"

	"github.com/stretchr/testify/assert"
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

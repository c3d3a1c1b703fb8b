// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// series returns the series (name and attributes) of md's points with a
// value, for instance id.
func seriesOf(md pmetric.Metrics, id string) map[string]bool {
	out := map[string]bool{}
	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		if v, ok := res.Get("ernic.id"); !ok || v.Str() != id || dp.Flags().NoRecordedValue() {
			return
		}
		out[m.Name()+" "+attrString(dp)] = true
	})
	return out
}

func attrString(dp pmetric.NumberDataPoint) string {
	var s string
	for k, v := range dp.Attributes().All() {
		s += k + "=" + v.AsString() + ","
	}
	return s
}

// An instance that leaves the manifest ends each of its series with one
// staleness marker; the other instances' series go on.
func TestStalenessInstanceRemoved(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	before := scrapeOK(t, s)
	gone := seriesOf(before, "1")
	require.Len(t, gone, 22, "instance 1's series: up, uptime, vm.attached, labels.truncated; 17 device series; qp.unpublished")

	now = now.Add(5 * time.Second)
	manifest, err := os.ReadFile(filepath.Join("testdata", "rundir", "basic", "instances.json"))
	require.NoError(t, err)
	// Drop the first entry (id 1).
	f.write(t, "instances.json", `{"instances": [`+string(manifest[len(`{
  "instances": [
    {
      "id": 1,
      "role": "manager",
      "pid": 4100,
      "mac": "02:aa:00:00:00:01",
      "socket": "/run/rocm-ernic/1.sock",
      "vm": null
    },`):]), now)
	md := scrapeOK(t, s)
	staleSeries := map[string]bool{}
	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		if !dp.Flags().NoRecordedValue() {
			return
		}
		id, _ := res.Get("ernic.id")
		require.Equal(t, "1", id.Str(), "only instance 1's series end")
		assert.Equal(t, tsOf(now), dp.Timestamp())
		start := tsOf(time.Unix(bootTime+10, 0))
		if m.Type() == pmetric.MetricTypeGauge {
			start = 0 // gauges carry none
		}
		assert.Equal(t, start, dp.StartTimestamp(), "the series' own start")
		staleSeries[m.Name()+" "+attrString(dp)] = true
	})
	assert.Equal(t, gone, staleSeries)
	assert.Equal(t, int64(2), intVal(t, md, "ernic.instances"))
	assert.Empty(t, seriesOf(md, "1"))
	assert.NotEmpty(t, seriesOf(md, "2"))

	// Once ended, a series gets no further markers.
	now = now.Add(5 * time.Second)
	_, stale := counts(scrapeOK(t, s))
	assert.Zero(t, stale)
}

// A label that changes value (the connection state) ends the old series.
func TestStalenessConnectionStateChange(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	scrapeOK(t, s)

	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	now = now.Add(5 * time.Second)
	f.write(t, "2.stats", replaceLine(t, string(whole), "connected (PCI FLR)", "disconnected (lost connection)"), now)
	md := scrapeOK(t, s)
	assert.Equal(t, int64(0), intVal(t, md, "ernic.connection.up", "ernic.id", "2", "state", "disconnected (lost connection)"))
	require.Len(t, stalePoints(md, "ernic.connection.up", "ernic.id", "2", "state", "connected (PCI FLR)"), 1)
	_, stale := counts(md)
	assert.Equal(t, 1, stale)
}

// A process that dies ends its uptime series; a sum keeps its type in the
// marker.
func TestStalenessProcessDies(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	scrapeOK(t, s)

	now = now.Add(5 * time.Second)
	f.setProc(t, 4117, "Z", 2550)
	require.NoError(t, os.Remove(filepath.Join(f.runDir, "2.stats")))
	md := scrapeOK(t, s)
	assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
	assert.Len(t, stalePoints(md, "ernic.instance.uptime", "ernic.id", "2"), 1)
	assert.Len(t, stalePoints(md, "ernic.commands", "ernic.id", "2"), 1)
	forEachPoint(md, func(m pmetric.Metric, dp pmetric.NumberDataPoint) {
		if m.Name() == "ernic.commands" {
			assert.True(t, m.Sum().IsMonotonic())
			assert.Equal(t, pmetric.AggregationTemporalityCumulative, m.Sum().AggregationTemporality())
		}
	})
}

// The run directory vanishing with nothing else published still carries
// the markers, each in its instance's resource and the receiver's scope.
func TestStalenessScope(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	before := scrapeOK(t, s)
	require.NoError(t, os.RemoveAll(f.runDir))
	now = now.Add(5 * time.Second)
	md, err := s.scrape(context.Background())
	require.NoError(t, err, "an absent run directory is an expected state")
	resources := func(md pmetric.Metrics) []string {
		var out []string
		for i := range md.ResourceMetrics().Len() {
			out = append(out, attrMapString(md.ResourceMetrics().At(i).Resource().Attributes()))
		}
		return out
	}
	assert.ElementsMatch(t, resources(before), resources(md), "one resource per instance and the cluster's, as before")
	names := map[string]bool{}
	for i := range md.ResourceMetrics().Len() {
		sm := md.ResourceMetrics().At(i).ScopeMetrics().At(0)
		assert.Equal(t, "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver", sm.Scope().Name())
		for j := range sm.Metrics().Len() {
			names[sm.Metrics().At(j).Name()] = true
		}
	}
	assert.Len(t, names, 38-1, "every metric but the off-by-default one")
	values, stale := counts(md)
	assert.Equal(t, 1, values, "ernic.run_dir.readable, 0")
	assert.Equal(t, int64(0), intVal(t, md, "ernic.run_dir.readable"))
	v, _ := counts(before)
	assert.Equal(t, v-1, stale, "one marker for each series of the scrape before but ernic.run_dir.readable")
}

func attrMapString(m pcommon.Map) string {
	var s string
	for k, v := range m.All() {
		s += k + "=" + v.AsString() + ","
	}
	return s
}

// A metric's series are compared as a set when they change: a series that
// moved keeps going, one that is gone ends once, a new one starts; each
// marker carries the series' own start time.
func TestStaleSeriesSet(t *testing.T) {
	tr := newStaleness("scope", "v")
	scrape := func(ts pcommon.Timestamp, qps ...string) (ended []string) {
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("ernic.qp.bytes.sent")
		m.SetEmptySum().SetIsMonotonic(true)
		for _, qp := range qps {
			dp := m.Sum().DataPoints().AppendEmpty()
			dp.Attributes().PutStr("qp", qp)
			start, _ := strconv.Atoi(qp)
			dp.SetStartTimestamp(pcommon.Timestamp(100 + start))
			dp.SetIntValue(1)
		}
		tr.begin()
		tr.mark(md.ResourceMetrics().At(0), ts)
		assert.Zero(t, tr.finish(ts, false).DataPointCount(), "the resource was published")
		dps := m.Sum().DataPoints()
		for i := range dps.Len() {
			if dp := dps.At(i); dp.Flags().NoRecordedValue() {
				qp := mustGet(t, dp.Attributes(), "qp").Str()
				start, _ := strconv.Atoi(qp)
				assert.Equal(t, pcommon.Timestamp(100+start), dp.StartTimestamp(), "qp %s", qp)
				assert.Equal(t, ts, dp.Timestamp())
				ended = append(ended, qp)
			}
		}
		return ended
	}
	assert.Empty(t, scrape(1, "1", "2", "3"))
	require.Len(t, tr.resources, 1)
	assert.Empty(t, scrape(2, "1", "2", "3"), "all seen again")
	assert.Empty(t, scrape(3, "3", "1", "2"), "all seen again, in another order")
	assert.Equal(t, []string{"2"}, scrape(4, "1", "3"))
	assert.ElementsMatch(t, []string{"1", "3"}, scrape(5, "4"))
	assert.Empty(t, scrape(6, "4"))
	assert.Empty(t, scrape(7, "4", "5"))
	assert.Equal(t, []string{"4"}, scrape(8, "5"))
}

// What is kept per series is its encoded attributes and an offset, with one
// start time while the series share it.
func TestStaleMemoryPerSeries(t *testing.T) {
	tr := newStaleness("scope", "v")
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("ernic.id", "7")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("ernic.qp.bytes.sent")
	m.SetEmptySum().SetIsMonotonic(true)
	for q := range 1024 {
		dp := m.Sum().DataPoints().AppendEmpty()
		dp.Attributes().PutStr("qp", strconv.Itoa(q*7+1))
		dp.SetStartTimestamp(5)
	}
	tr.begin()
	tr.mark(rm, 10)
	l := tr.resources[string(encodeAttrs(nil, rm.Resource().Attributes()))].series["ernic.qp.bytes.sent"]
	require.NotNil(t, l)
	assert.Equal(t, 1024, l.len())
	assert.Nil(t, l.starts, "one start time for all")
	assert.Equal(t, pcommon.Timestamp(5), l.start)
	perSeries := float64(len(l.enc)+4*cap(l.ends)) / 1024
	assert.Less(t, perSeries, 16.0, "bytes a series (qp=\"1234\": 9 bytes encoded, 4 of offset)")
}

// With ernic.id turned off, instances of one role share a resource and come
// in several batches of it: nothing is ended while their series go on, and
// an instance that stops publishing a series ends it once, at the scrape's
// end.
func TestStalenessSharedResource(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	cfg := f.config(func(c *Config) { c.ResourceAttributes.ErnicID.Enabled = false })
	s := newTestScraper(t, cfg, &now)
	manifest := `{"instances": [
 {"id": 1, "role": "worker", "pid": 4100, "mac": "02:aa:00:00:00:01", "vm": null},
 {"id": 2, "role": "worker", "pid": 4200, "mac": "02:aa:00:00:00:02", "vm": null}]}`
	f.write(t, "instances.json", manifest, now)
	first := scrapeOK(t, s)
	workers := 0
	for i := range first.ResourceMetrics().Len() {
		if role, ok := first.ResourceMetrics().At(i).Resource().Attributes().Get("role"); ok && role.Str() == "worker" {
			workers++
		}
	}
	require.Equal(t, 2, workers, "two batches of the resource role=worker")
	for range 2 {
		now = now.Add(5 * time.Second)
		_, stale := counts(scrapeOK(t, s))
		assert.Zero(t, stale, "nothing ends while both instances publish")
	}
	// Instance 2's MAC changes: its ernic.instance.up series with the old
	// MAC ends, once.
	now = now.Add(5 * time.Second)
	f.write(t, "instances.json", strings.Replace(manifest, "02:aa:00:00:00:02", "02:aa:00:00:00:22", 1), now)
	md := scrapeOK(t, s)
	ended := stalePoints(md, "ernic.instance.up")
	require.Len(t, ended, 1)
	assert.Equal(t, "02:aa:00:00:00:02", mustGet(t, ended[0].Attributes(), "mac").Str())
	now = now.Add(5 * time.Second)
	_, stale := counts(scrapeOK(t, s))
	assert.Zero(t, stale)
}

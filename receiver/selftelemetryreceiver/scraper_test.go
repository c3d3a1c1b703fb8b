// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package selftelemetryreceiver

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"
	"github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver/internal/metadata"
)

// point is one published point, by metric name and attributes.
type point struct {
	value  float64
	start  time.Time
	ts     time.Time
	noData bool
}

// pointsOf indexes md's points by metric name and attributes (k=v, sorted).
func pointsOf(t *testing.T, md pmetric.Metrics) map[string]point {
	t.Helper()
	require.Equal(t, 1, md.ResourceMetrics().Len())
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	out := map[string]point{}
	for i := range ms.Len() {
		m := ms.At(i)
		dps := points(m)
		for j := range dps.Len() {
			dp := dps.At(j)
			key := m.Name()
			for _, k := range slices.Sorted(maps.Keys(dp.Attributes().AsRaw())) {
				v, _ := dp.Attributes().Get(k)
				key += " " + k + "=" + v.AsString()
			}
			_, dup := out[key]
			require.False(t, dup, "series %s twice", key)
			v := float64(dp.IntValue())
			if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
				v = dp.DoubleValue()
			}
			out[key] = point{v, dp.StartTimestamp().AsTime(), dp.Timestamp().AsTime(), dp.Flags().NoRecordedValue()}
		}
	}
	return out
}

func values(ps map[string]point) map[string]float64 {
	out := map[string]float64{}
	for k, p := range ps {
		if !p.noData {
			out[k] = p.value
		}
	}
	return out
}

func newTestScraper(t *testing.T, cfg *Config, snaps *[]deliverystats.Snapshot) (*deliveryScraper, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.WarnLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	set.BuildInfo.Version = "1.2.3-test"
	set.BuildInfo.Command = "otelcol-ernic"
	s := newDeliveryScraper(cfg, set, func() []deliverystats.Snapshot { return slices.Clone(*snaps) })
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	return s, logs
}

func scrapePoints(t *testing.T, s *deliveryScraper) (map[string]point, pmetric.Metrics) {
	t.Helper()
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	return pointsOf(t, md), md
}

// Every field of a snapshot becomes its series, with the exporter's start
// as the counters' start; the build info carries the version.
func TestScrapeSnapshot(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	queued := time.Date(2026, 3, 1, 11, 0, 5, 500_000_000, time.UTC)
	sent := time.Date(2026, 3, 1, 11, 0, 0, 250_000_000, time.UTC)
	oldest := time.Date(2026, 3, 1, 10, 59, 55, 0, time.UTC)
	snaps := []deliverystats.Snapshot{{
		Exporter: "remote_write", Start: start,
		PointsSent: 1000, BytesSent: 52_000,
		PointsRetried:    map[string]int64{"http_503": 40, "connection": 7},
		PointsRejected:   map[string]int64{"http_400": 3},
		PointsDropped:    map[string]int64{deliverystats.ReasonOldest: 12, "a_reason_of_later": 4},
		PointsNotWritten: 2,
		QueuePoints:      80, QueueBytes: 4096, QueueCapacity: 268435456, QueueSizer: "bytes",
		QueuedNewest: queued, SentNewest: sent, QueuedOldest: oldest,
	}}
	cfg := createDefaultConfig().(*Config)
	before := time.Now()
	s, logs := newTestScraper(t, cfg, &snaps)
	got, md := scrapePoints(t, s)

	want := map[string]float64{
		"otelcol.build.info version=1.2.3-test":                                   1,
		"otelcol.delivery.points.sent exporter=remote_write":                      1000,
		"otelcol.delivery.bytes.sent exporter=remote_write":                       52_000,
		"otelcol.delivery.points.retried exporter=remote_write reason=http_503":   40,
		"otelcol.delivery.points.retried exporter=remote_write reason=connection": 7,
		"otelcol.delivery.points.rejected exporter=remote_write reason=http_400":  3,
		"otelcol.delivery.points.not_written exporter=remote_write":               2,
		"otelcol.delivery.queue.points exporter=remote_write":                     80,
		"otelcol.delivery.queue.bytes exporter=remote_write":                      4096,
		"otelcol.delivery.queue.capacity exporter=remote_write sizer=bytes":       268435456,
		"otelcol.delivery.queued.newest_timestamp exporter=remote_write":          1772362805.5,
		"otelcol.delivery.sent.newest_timestamp exporter=remote_write":            1772362800.25,
		"otelcol.delivery.queue.oldest_timestamp exporter=remote_write":           1772362795,
	}
	// Every drop reason, at 0 unless it happened.
	for _, r := range deliverystats.DroppedReasons {
		want["otelcol.delivery.points.dropped exporter=remote_write reason="+r] = 0
	}
	want["otelcol.delivery.points.dropped exporter=remote_write reason=oldest"] = 12
	want["otelcol.delivery.points.dropped exporter=remote_write reason=a_reason_of_later"] = 4
	assert.Equal(t, want, values(got))
	for k, p := range got {
		assert.False(t, p.ts.Before(before), "%s: timestamp %v before the scrape", k, p.ts)
		if k == "otelcol.build.info version=1.2.3-test" {
			assert.False(t, p.start.Before(before), "the build info starts with the receiver")
		} else {
			assert.Equal(t, start, p.start.UTC(), "%s: start time", k)
		}
	}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := range ms.Len() {
		m := ms.At(i)
		if m.Type() == pmetric.MetricTypeSum {
			assert.True(t, m.Sum().IsMonotonic(), m.Name())
			assert.Equal(t, pmetric.AggregationTemporalityCumulative, m.Sum().AggregationTemporality(), m.Name())
		}
	}
	// service.name keeps the resource apart from the ernic receiver's
	// cluster gauges' (no attribute but host.name) in prometheus_text.
	assert.Equal(t, map[string]any{"service.name": "otelcol-ernic"}, md.ResourceMetrics().At(0).Resource().Attributes().AsRaw(),
		"host.name is off by default")
	assert.Zero(t, logs.Len(), "%v", logs.All())
}

// Without exporters (the pull config) only the build info is published;
// a time not known yet and a queue without capacity are not published.
func TestScrapeWithoutExportersAndUnknownTimes(t *testing.T) {
	var snaps []deliverystats.Snapshot
	s, _ := newTestScraper(t, createDefaultConfig().(*Config), &snaps)
	got, _ := scrapePoints(t, s)
	assert.Equal(t, map[string]float64{"otelcol.build.info version=1.2.3-test": 1}, values(got))

	snaps = []deliverystats.Snapshot{{Exporter: "otlp_durable", Start: time.Now()}}
	got, _ = scrapePoints(t, s)
	for k := range values(got) {
		assert.NotContains(t, k, "newest_timestamp", "a zero time is not published")
		assert.NotContains(t, k, "capacity", "no queue, no capacity")
	}
	// Nothing queued: the oldest queued time is the collection's (a lag of 0).
	p := got["otelcol.delivery.queue.oldest_timestamp exporter=otlp_durable"]
	assert.InDelta(t, float64(p.ts.UnixNano())/1e9, p.value, 1e-3)
	assert.Contains(t, values(got), "otelcol.delivery.points.dropped exporter=otlp_durable reason=queue_full")
}

// A series that stops ends with one point without a recorded value: every
// series of an exporter that went away. The queue's oldest time does not
// stop when the queue empties: it becomes the collection's time. The next
// scrape has no marker again.
func TestSeriesThatStopEndWithAMarker(t *testing.T) {
	oldest := time.Now().Add(-time.Minute)
	snap := deliverystats.Snapshot{Exporter: "remote_write", Start: time.Now(), QueuedOldest: oldest, QueueCapacity: 10, QueueSizer: "bytes"}
	other := deliverystats.Snapshot{Exporter: "otlp_durable/b", Start: time.Now()}
	snaps := []deliverystats.Snapshot{other, snap}
	s, _ := newTestScraper(t, createDefaultConfig().(*Config), &snaps)
	first, _ := scrapePoints(t, s)
	require.Contains(t, values(first), "otelcol.delivery.queue.oldest_timestamp exporter=remote_write")

	snap.QueuedOldest = time.Time{}
	snaps = []deliverystats.Snapshot{snap}
	got, _ := scrapePoints(t, s)
	var ended []string
	for k, p := range got {
		if p.noData {
			ended = append(ended, k)
			assert.False(t, p.ts.IsZero(), k)
		}
	}
	slices.Sort(ended)
	var want []string
	for k := range values(first) {
		if strings.Contains(k, " exporter=otlp_durable/b") {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	assert.Equal(t, want, ended)
	assert.Len(t, want, 3+len(deliverystats.DroppedReasons)+3, "otlp_durable/b's 3 counters, drop reasons and 3 queue gauges")
	now := got["otelcol.delivery.queue.oldest_timestamp exporter=remote_write"]
	assert.False(t, now.noData)
	assert.Greater(t, now.value, float64(oldest.Unix()), "the collection's time once the queue is empty")

	again, _ := scrapePoints(t, s)
	for k, p := range again {
		assert.False(t, p.noData, "%s ended twice", k)
	}
}

// An exporter ID registered twice publishes the first counts only, and
// says so once per faultInterval; one without an ID is left out.
func TestDuplicateExporterLoggedAndLeftOut(t *testing.T) {
	snaps := []deliverystats.Snapshot{
		{Exporter: "remote_write", Start: time.Now(), PointsSent: 5},
		{Exporter: "remote_write", Start: time.Now(), PointsSent: 9},
		{Start: time.Now(), PointsSent: 1},
	}
	s, logs := newTestScraper(t, createDefaultConfig().(*Config), &snaps)
	for range 3 {
		got, _ := scrapePoints(t, s)
		assert.Equal(t, 5.0, values(got)["otelcol.delivery.points.sent exporter=remote_write"])
		assert.NotContains(t, values(got), "otelcol.delivery.points.sent exporter=")
	}
	msgs := []string{}
	for _, e := range logs.All() {
		msgs = append(msgs, e.Message)
	}
	assert.ElementsMatch(t, []string{
		"exporter remote_write registered its delivery counts twice; only the first is published",
		"an exporter registered its delivery counts without its ID; they are not published",
	}, msgs)
}

// host.name, when on, is the host_name setting or the kernel's host name.
func TestHostName(t *testing.T) {
	var snaps []deliverystats.Snapshot
	cfg := createDefaultConfig().(*Config)
	cfg.ResourceAttributes.HostName.Enabled = true
	cfg.HostName = "gpu-host-7"
	s, _ := newTestScraper(t, cfg, &snaps)
	_, md := scrapePoints(t, s)
	v, ok := md.ResourceMetrics().At(0).Resource().Attributes().Get("host.name")
	require.True(t, ok)
	assert.Equal(t, "gpu-host-7", v.Str())
	require.NoError(t, s.shutdown(context.Background()))

	cfg = createDefaultConfig().(*Config)
	cfg.ResourceAttributes.HostName.Enabled = true
	s, _ = newTestScraper(t, cfg, &snaps)
	_, md = scrapePoints(t, s)
	kernel, err := os.Hostname()
	require.NoError(t, err)
	v, _ = md.ResourceMetrics().At(0).Resource().Attributes().Get("host.name")
	assert.Equal(t, kernel, v.Str())
}

// Two receivers of one identity refuse to run together: the second's start
// fails and names the first. Another identity, or the first stopped, is fine.
func TestSecondReceiverOfOneIdentityRefused(t *testing.T) {
	var snaps []deliverystats.Snapshot
	start := func(name string, hostNameOn bool, host string) (*deliveryScraper, error) {
		cfg := createDefaultConfig().(*Config)
		cfg.ResourceAttributes.HostName.Enabled = hostNameOn
		cfg.HostName = host
		set := receivertest.NewNopSettings(metadata.Type)
		set.ID = component.MustNewIDWithName(metadata.Type.String(), name)
		s := newDeliveryScraper(cfg, set, func() []deliverystats.Snapshot { return snaps })
		return s, s.start(context.Background(), componenttest.NewNopHost())
	}
	a, err := start("", true, "h1")
	require.NoError(t, err)
	_, err = start("b", true, "h1")
	require.EqualError(t, err, `receiver selftelemetry already publishes this collector's delivery series with host.name "h1"; `+
		`selftelemetry/b would publish the same series again, and the backend would get each one twice: `+
		`list the one receiver selftelemetry in every pipeline that needs it (the collector shares it among them)`)

	// The fleet profile's pair: one without host.name for the local endpoint.
	local, err := start("local", false, "")
	require.NoError(t, err)
	_, err = start("local2", false, "")
	require.ErrorContains(t, err, "receiver selftelemetry/local already publishes this collector's delivery series without host.name")
	require.NoError(t, local.shutdown(context.Background()))

	require.NoError(t, a.shutdown(context.Background()))
	c, err := start("c", true, "h1")
	require.NoError(t, err, "the identity is free once its receiver stopped")
	require.NoError(t, c.shutdown(context.Background()))
}

// The receiver as the collector runs it: the scraper controller collects
// the registry's snapshots and hands them to the pipeline.
func TestReceiverPublishesRegisteredSnapshots(t *testing.T) {
	unregister := deliverystats.Register(func() deliverystats.Snapshot {
		return deliverystats.Snapshot{Exporter: "remote_write", Start: time.Now().Add(-time.Hour), PointsSent: 42}
	})
	defer unregister()
	cfg := createDefaultConfig().(*Config)
	cfg.CollectionInterval = time.Second
	cfg.InitialDelay = 0
	sink := new(consumertest.MetricsSink)
	set := receivertest.NewNopSettings(metadata.Type)
	set.BuildInfo.Version = "9.9.9"
	r, err := NewFactory().CreateMetrics(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) > 0 }, 10*time.Second, 20*time.Millisecond)
	got := values(pointsOf(t, sink.AllMetrics()[0]))
	assert.Equal(t, 42.0, got["otelcol.delivery.points.sent exporter=remote_write"])
	assert.Equal(t, 1.0, got["otelcol.build.info version=9.9.9"])
}

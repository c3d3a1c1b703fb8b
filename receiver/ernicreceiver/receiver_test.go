// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadatatest"
)

// The receiver publishes scraperhelper's two counters, in data points: one
// scrape of the basic run directory with one unusable manifest entry is
// its published points scraped and that one entry errored.
func TestScraperTelemetry(t *testing.T) {
	f := newFixture(t, "basic")
	f.write(t, "instances.json", `{"instances": [{"id": "x"}, {"id": 2, "role": "worker", "pid": 4117}]}`, scrapeNow.Add(-time.Second))
	cfg := f.config(func(c *Config) { c.CollectionInterval = time.Hour })

	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	sink := &consumertest.MetricsSink{}
	set := metadatatest.NewSettings(tt)
	r, err := NewFactory().CreateMetrics(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	// The instance's batch, then the cluster's: the whole scrape.
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))

	attrs := attribute.NewSet(attribute.String("receiver", set.ID.String()), attribute.String("scraper", "ernic"))
	published := int64(sink.DataPointCount())
	assert.Greater(t, published, int64(20), "one instance's points and the cluster gauges")
	metadatatest.AssertEqualScraperScrapedMetricPoints(t, tt, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: published}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualScraperErroredMetricPoints(t, tt, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: 1}}, metricdatatest.IgnoreTimestamp())
}

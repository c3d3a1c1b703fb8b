// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// TestBulkMatchesBuilder records the same run directory through bulkPoints
// and through the generated builder alone, and requires the same metrics:
// names, descriptions, units, types, points, attributes, start times and
// point order within each metric.
func TestBulkMatchesBuilder(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.RunDir = writeBenchRunDir(t, 4, 32)
	cfg.Metrics.ErnicQpWqesByOpcode.Enabled = true
	now := time.Now()
	scrape := func(bulk bool) pmetric.Metrics {
		s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
		s.now = func() time.Time { return now }
		if !bulk {
			s.bulk = nil
		}
		require.NoError(t, s.start(context.Background(), nil))
		md, err := s.scrape(context.Background())
		require.NoError(t, err)
		return md
	}
	viaBulk, viaBuilder := scrape(true), scrape(false)
	require.Greater(t, viaBulk.DataPointCount(), 4*32*8, "every QP counter of every QP")
	require.NoError(t, pmetrictest.CompareMetrics(viaBuilder, viaBulk, pmetrictest.IgnoreMetricsOrder()))
}

// TestAttributedMetricsComplete guards attributedMetrics, the receiver's
// hand-kept list of the generated metric configs with attributes: each one
// mdatagen generates (found here by reflection on the mapstructure tags and
// the EnabledAttributes field) must be listed, and its entry must read that
// metric's fields, not another's.
func TestAttributedMetricsComplete(t *testing.T) {
	def := reflect.ValueOf(metadata.DefaultMetricsConfig())
	typ := def.Type()
	generated := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := f.Tag.Get("mapstructure")
		attrs, ok := f.Type.FieldByName("EnabledAttributes")
		if !ok {
			continue // a metric without attributes
		}
		generated++
		entry, listed := attributedMetrics[name]
		if !assert.True(t, listed, "metric %s (MetricsConfig.%s) has attributes but is not in attributedMetrics", name, f.Name) {
			continue
		}
		// Only this metric enabled, with its default attributes: its entry
		// must see exactly that, every other entry a disabled metric
		// without attributes.
		var mc metadata.MetricsConfig
		field := reflect.ValueOf(&mc).Elem().Field(i)
		field.FieldByName("Enabled").SetBool(true)
		field.FieldByIndex(attrs.Index).Set(def.Field(i).FieldByIndex(attrs.Index))
		want := def.Field(i).FieldByIndex(attrs.Index).Len()
		require.Positive(t, want, "metric %s has no default attributes", name)
		on, n := entry(&mc)
		assert.True(t, *on, "attributedMetrics[%s] does not read MetricsConfig.%s.Enabled", name, f.Name)
		assert.Equal(t, want, n, "attributedMetrics[%s] does not read MetricsConfig.%s.EnabledAttributes", name, f.Name)
		for other, m := range attributedMetrics {
			if other == name {
				continue
			}
			on, n := m(&mc)
			assert.False(t, *on, "attributedMetrics[%s] reads the Enabled flag of %s", other, name)
			assert.Zero(t, n, "attributedMetrics[%s] reads the attributes of %s", other, name)
		}
	}
	// Also fails when mdatagen stops generating EnabledAttributes under that
	// name: no generated metric would have attributes.
	assert.Equal(t, len(attributedMetrics), generated, "attributedMetrics lists metrics that have no attributes in the generated config")
	for _, c := range qpCounters {
		assert.Contains(t, attributedMetrics, c.name, "per-QP metric %s", c.name)
	}
}

// TestReaggregates: the builder path is taken exactly when an enabled
// metric keeps fewer attributes than by default.
func TestReaggregates(t *testing.T) {
	assert.False(t, reaggregates(metadata.DefaultMetricsConfig()), "defaults")
	for name, m := range attributedMetrics {
		mc := metadata.DefaultMetricsConfig()
		on, _ := m(&mc)
		*on = true
		assert.False(t, reaggregates(mc), "%s enabled with its default attributes", name)
	}

	mc := metadata.DefaultMetricsConfig()
	mc.ErnicQpBytesSent.EnabledAttributes = nil
	assert.True(t, reaggregates(mc), "ernic.qp.bytes.sent without qp")
	mc.ErnicQpBytesSent.Enabled = false
	assert.False(t, reaggregates(mc), "ernic.qp.bytes.sent without qp, disabled")

	mc = metadata.DefaultMetricsConfig()
	mc.ErnicQpWqesByOpcode.EnabledAttributes = mc.ErnicQpWqesByOpcode.EnabledAttributes[:1]
	assert.False(t, reaggregates(mc), "ernic.qp.wqes.by_opcode with one attribute, disabled by default")
	mc.ErnicQpWqesByOpcode.Enabled = true
	assert.True(t, reaggregates(mc), "ernic.qp.wqes.by_opcode with one attribute, enabled")

	mc = metadata.DefaultMetricsConfig()
	mc.ErnicConnectionUp.EnabledAttributes = nil
	assert.True(t, reaggregates(mc), "ernic.connection.up without state")
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// allocsBaseline is testdata/bench/allocs.json: allocations of one steady
// scrape per run-directory size, as measured when the file was written.
type allocsBaseline struct {
	// ScrapeDefault maps a size ("16x64") to allocations per scrape with
	// the default metrics.
	ScrapeDefault map[string]float64 `json:"scrape_default"`
}

// maxAllocsPerPoint is the stated bound on allocations per published data
// point of a steady scrape: a bulk point takes 4 (the point, its int value,
// its attribute slice and the qp or counter string value, bulkPoints.add);
// the rest is the QP handle strings and a share of the per-instance work.
const maxAllocsPerPoint = 6

// TestScrapeAllocations fails when a steady scrape allocates more than 25 %
// over the stored baseline, or more than maxAllocsPerPoint per published
// point. Allocation counts are deterministic, unlike times, so this is the
// regression test of `make test`; speed is measured by `make bench`.
func TestScrapeAllocations(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench", "allocs.json"))
	require.NoError(t, err)
	var base allocsBaseline
	require.NoError(t, json.Unmarshal(raw, &base))

	for _, size := range []struct{ instances, qps int }{{1, 16}, {16, 64}} {
		name := sizeName(size.instances, size.qps)
		t.Run(name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.RunDir = writeBenchRunDir(t, size.instances, size.qps)
			s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
			require.NoError(t, s.start(context.Background(), nil))
			md, err := s.scrape(context.Background()) // the first scrape creates the state
			require.NoError(t, err)
			points := md.DataPointCount()

			allocs := testing.AllocsPerRun(3, func() {
				if _, err := s.scrape(context.Background()); err != nil {
					t.Fatal(err)
				}
			})
			want, ok := base.ScrapeDefault[name]
			require.True(t, ok, "no baseline for %s in testdata/bench/allocs.json", name)
			t.Logf("%s: %.0f allocations per scrape, %d points, %.2f per point (baseline %.0f)", name, allocs, points, allocs/float64(points), want)
			assert.LessOrEqual(t, allocs, want*1.25, "allocations regressed by more than 25%% against the baseline")
			assert.LessOrEqual(t, allocs/float64(points), float64(maxAllocsPerPoint))
		})
	}
}

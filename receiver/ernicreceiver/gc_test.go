// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

const mb = 1 << 20

func TestGCDue(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		live, goal, objects, scrape uint64
		want                        bool
	}{
		// live 3 MB, goal 6 MB: the earliest trigger is at 5.1 MB.
		{"next scrape crosses the trigger", 3 * mb, 6 * mb, 4 * mb, 6 * mb / 5, true},
		{"already past the trigger", 3 * mb, 6 * mb, 11 * mb / 2, 0, true},
		{"room for the next scrape", 3 * mb, 6 * mb, 7 * mb / 2, 1 * mb, false},
		{"just below", 3 * mb, 6 * mb, 4 * mb, 1 * mb, false},
		{"no goal above the marked heap", 3 * mb, 3 * mb, 9 * mb, 9 * mb, false},
		{"no readings", 0, 0, 0, 0, false},
		// 12 MB marked (64x256): Go collects in every scrape anyway.
		{"a large heap", 12 * mb, 24 * mb, 20 * mb, 15 * mb, false},
		{"at the largest heap collected for", gcMaxLive, 2 * gcMaxLive, 2 * gcMaxLive, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, gcDue(tc.live, tc.goal, tc.objects, tc.scrape))
		})
	}
}

// fakeHeap answers the pacer's reads: allocsStart at the start of a
// scrape, the rest at its end.
type fakeHeap struct{ allocsStart, allocsEnd, live, goal, objects uint64 }

func (f fakeHeap) reader() func() heapReading {
	calls := 0
	return func() heapReading {
		calls++
		if calls%2 == 1 {
			return heapReading{allocs: f.allocsStart, live: f.live, goal: f.goal, objects: f.live}
		}
		return heapReading{allocs: f.allocsEnd, live: f.live, goal: f.goal, objects: f.objects}
	}
}

// TestReceiverGCAfterScrape runs real scrapes of a 2x16 run directory with
// the pacer's readings and collection replaced: a collection when the
// heap would reach the trigger in the next scrape, none otherwise, none
// with gc_after_scrape off.
func TestReceiverGCAfterScrape(t *testing.T) {
	for _, tc := range []struct {
		name    string
		on      bool
		heap    fakeHeap
		collect int
	}{
		// The scrape allocated 1.5 MB; 4 + 1.5 MB reaches 5.1 MB.
		{"due", true, fakeHeap{allocsStart: 100 * mb, allocsEnd: 203 * mb / 2, live: 3 * mb, goal: 6 * mb, objects: 4 * mb}, 1},
		{"room left", true, fakeHeap{allocsStart: 100 * mb, allocsEnd: 201 * mb / 2, live: 3 * mb, goal: 6 * mb, objects: 7 * mb / 2}, 0},
		{"off", false, fakeHeap{allocsStart: 100 * mb, allocsEnd: 203 * mb / 2, live: 3 * mb, goal: 6 * mb, objects: 4 * mb}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.RunDir = writeBenchRunDir(t, 2, 16)
			cfg.GCAfterScrape = tc.on
			sink := new(consumertest.MetricsSink)
			r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), sink)
			require.NoError(t, err)
			require.NoError(t, r.scraper.start(context.Background(), nil))
			collected := 0
			if tc.on {
				require.NotNil(t, r.gc)
				r.gc.read = tc.heap.reader()
				r.gc.collect = func() { collected++ }
			} else {
				assert.Nil(t, r.gc)
			}
			r.scrapeOnce(context.Background())
			assert.Positive(t, sink.DataPointCount(), "the scrape published its points")
			assert.Equal(t, tc.collect, collected)
		})
	}
}

// TestReadHeap: the runtime/metrics the pacer reads exist in this Go
// and hold byte counts (a misspelt name would read as 0, leaving the
// pacer silently never collecting).
func TestReadHeap(t *testing.T) {
	var s [len(heapSamples)]metrics.Sample
	for i, name := range heapSamples {
		s[i].Name = name
	}
	metrics.Read(s[:])
	for _, x := range s {
		assert.Equal(t, metrics.KindUint64, x.Value.Kind(), x.Name)
	}
	runtime.GC()
	h := readHeap()
	assert.Positive(t, h.allocs)
	assert.Positive(t, h.live)
	assert.Greater(t, h.goal, h.live, "the goal is above the marked heap")
	assert.Positive(t, h.objects)
}

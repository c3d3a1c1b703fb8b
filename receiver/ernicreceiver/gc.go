// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"runtime"
	"runtime/metrics"
)

// gcTriggerShare is where Go starts a collection at the earliest, from the
// marked heap to the goal (minTriggerRatioNum, 45/64, runtime/mgcpacer.go).
const gcTriggerShare = 0.7

// gcMaxLive is the largest marked heap the pacer collects for: above it a
// scrape fills the heap's room anyway and an early mark only costs.
const gcMaxLive = 8 << 20

// The runtime/metrics readHeap reads.
const (
	metricHeapAllocs  = "/gc/heap/allocs:bytes"              // allocated since the start, cumulative
	metricHeapLive    = "/gc/heap/live:bytes"                // marked by the last collection
	metricHeapGoal    = "/gc/heap/goal:bytes"                // where the next collection must end
	metricHeapObjects = "/memory/classes/heap/objects:bytes" // in use now, garbage not yet swept included
)

// gcPacer collects at the end of a scrape when the next would start a
// collection: a mark beside a scrape counts its garbage as live, and the goal
// doubles it (docs/performance-memory.md, gc_after_scrape).
type gcPacer struct {
	read    func() heapReading // readHeap; tests replace it
	collect func()             // runtime.GC; tests count the calls
	// allocsAtStart is /gc/heap/allocs:bytes when the scrape started.
	allocsAtStart uint64
}

// heapReading is what the pacer reads of the runtime, bytes.
type heapReading struct {
	allocs  uint64 // allocated since the process started
	live    uint64 // marked by the last collection
	goal    uint64 // where the next collection must end
	objects uint64 // in use now, garbage not yet swept included
}

func newGCPacer() *gcPacer {
	return &gcPacer{read: readHeap, collect: runtime.GC}
}

func (p *gcPacer) scrapeStarted() {
	p.allocsAtStart = p.read().allocs
}

// scrapeEnded collects when the next scrape would reach the trigger.
func (p *gcPacer) scrapeEnded() {
	h := p.read()
	if h.allocs < p.allocsAtStart {
		return // not a cumulative count: a broken reading
	}
	if gcDue(h.live, h.goal, h.objects, h.allocs-p.allocsAtStart) {
		p.collect()
	}
}

// gcDue reports whether objects plus a scrape like the last would reach the
// trigger; never above gcMaxLive, nor with no valid goal (GOGC=off: out of reach).
func gcDue(live, goal, objects, scrape uint64) bool {
	if live > gcMaxLive || goal <= live {
		return false
	}
	trigger := float64(live) + gcTriggerShare*float64(goal-live)
	return float64(objects)+float64(scrape) >= trigger
}

// heapSamples are in heapReading's order.
var heapSamples = [...]string{metricHeapAllocs, metricHeapLive, metricHeapGoal, metricHeapObjects}

// readHeap reads the heap; a metric this Go lacks reads as 0 (TestReadHeap).
func readHeap() heapReading {
	var s [len(heapSamples)]metrics.Sample
	for i, name := range heapSamples {
		s[i].Name = name
	}
	metrics.Read(s[:])
	v := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return heapReading{allocs: v(0), live: v(1), goal: v(2), objects: v(3)}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"runtime"
	"runtime/metrics"
)

// gcTriggerShare is how far from the marked heap to the heap's goal Go
// starts a collection at the earliest: 70 % (minTriggerRatioNum, 45/64, in
// the runtime's mgcpacer.go). A heap that the next scrape would take past
// it is collected before that scrape.
const gcTriggerShare = 0.7

// gcMaxLive is the largest marked heap, in bytes, the pacer collects
// for. The room a scrape in progress adds to the goal matters while the
// heap is small; above, a scrape allocates about as much as the heap's
// room, so Go collects in every scrape anyway, and each collection brought
// forward costs a mark of a large heap for no memory
// (docs/performance-memory.md, gc_after_scrape).
const gcMaxLive = 8 << 20

// The runtime/metrics readHeap reads.
const (
	metricHeapAllocs  = "/gc/heap/allocs:bytes"              // allocated since the start, cumulative
	metricHeapLive    = "/gc/heap/live:bytes"                // marked by the last collection
	metricHeapGoal    = "/gc/heap/goal:bytes"                // where the next collection must end
	metricHeapObjects = "/memory/classes/heap/objects:bytes" // in use now, garbage not yet swept included
)

// gcPacer runs Go's garbage collection at the end of a scrape when the
// next scrape would otherwise start one in the middle of its work
// (gc_after_scrape).
//
// Why: the collector allocates almost only in scrapes (the points, and what
// the exporters make of them), so Go's trigger, 70-95 % of the way from
// the last marked heap to the goal, is nearly always reached inside one.
// With one CPU (GOMAXPROCS=1, the unit's) the mark then runs beside the
// scrape, and what the scrape allocates meanwhile is counted as marked;
// the next goal, twice the marked heap, carries that garbage too.
// Collected when the scrape has handed its batches on, the marked heap is
// what is live. The collection is one the next scrape would have started
// anyway, moved to where it finds the least garbage
// (docs/performance-memory.md, gc_after_scrape).
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

// scrapeStarted notes the bytes allocated so far.
func (p *gcPacer) scrapeStarted() {
	p.allocsAtStart = p.read().allocs
}

// scrapeEnded collects now when the heap in use and what this scrape
// allocated would reach the trigger in the next one.
func (p *gcPacer) scrapeEnded() {
	h := p.read()
	if h.allocs < p.allocsAtStart {
		return // not a cumulative count: a broken reading
	}
	if gcDue(h.live, h.goal, h.objects, h.allocs-p.allocsAtStart) {
		p.collect()
	}
}

// gcDue: whether a heap of objects bytes in use, after a scrape that
// allocated scrape bytes, would reach the earliest trigger (gcTriggerShare
// of the way from live to goal) in a scrape like it. Never above gcMaxLive
// marked, nor with a goal at or below the marked heap (no reading);
// GOGC=off's goal is out of reach.
func gcDue(live, goal, objects, scrape uint64) bool {
	if live > gcMaxLive || goal <= live {
		return false
	}
	trigger := float64(live) + gcTriggerShare*float64(goal-live)
	return float64(objects)+float64(scrape) >= trigger
}

// heapSamples are the runtime/metrics readHeap reads, in heapReading's
// order.
var heapSamples = [...]string{metricHeapAllocs, metricHeapLive, metricHeapGoal, metricHeapObjects}

// readHeap reads the heap from runtime/metrics; a metric this Go does not
// have reads as 0 (TestReadHeap checks that all are there).
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

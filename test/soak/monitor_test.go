// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// ---------------------------------------------------------------------------
// Resource monitor.

type resSample struct {
	at      time.Time
	rssKiB  int64
	threads int
	fds     int
}

type monitor struct {
	mu      sync.Mutex
	samples []resSample
	heap    []float64 // otelcol_process_runtime_heap_alloc_bytes every 10s
}

func procStatus(pid int) (rssKiB int64, threads int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rssKiB, _ = strconv.ParseInt(f[1], 10, 64)
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		}
	}
	return rssKiB, threads, nil
}

func (m *monitor) run(ctx context.Context, pid, telemetryPort int) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rss, threads, err := procStatus(pid)
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		m.mu.Lock()
		m.samples = append(m.samples, resSample{time.Now(), rss, threads, len(fds)})
		m.mu.Unlock()
		if i%10 == 0 {
			if v, ok := telemetryValue(ctx, telemetryPort, "otelcol_process_runtime_heap_alloc_bytes"); ok {
				m.mu.Lock()
				m.heap = append(m.heap, v)
				m.mu.Unlock()
			}
		}
	}
}

// telemetryValue reads one gauge of the collector's own metrics.
func telemetryValue(ctx context.Context, port int, name string) (float64, bool) {
	mfs, err := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0, false
	}
	mf, ok := mfs[name]
	if !ok || len(mf.GetMetric()) == 0 {
		return 0, false
	}
	m := mf.GetMetric()[0]
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// telemetryLosses sums, per family, the collector's own counters of
// refused, failed or dropped points (memory_limiter refusals, send failures).
func telemetryLosses(ctx context.Context, port int) map[string]float64 {
	out := map[string]float64{}
	mfs, err := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return out
	}
	for name, mf := range mfs {
		if !strings.Contains(name, "refused") && !strings.Contains(name, "failed") && !strings.Contains(name, "dropped") {
			continue
		}
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				out[name] += c.GetValue()
			}
		}
	}
	return out
}

// goroutineCounts parses the GODEBUG=schedtrace=...,scheddetail=1 output:
// per SCHED block, the goroutines that are not dead.
func goroutineCounts(stderr string) []int {
	var out []int
	n := -1
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasPrefix(line, "SCHED "):
			if n >= 0 {
				out = append(out, n)
			}
			n = 0
		case n >= 0 && strings.HasPrefix(line, "  G"):
			i := strings.Index(line, ": status=")
			if i < 0 {
				continue
			}
			st := line[i+len(": status="):]
			if j := strings.IndexAny(st, "( "); j >= 0 {
				st = st[:j]
			}
			if s, err := strconv.Atoi(st); err == nil && s != 6 && s != 0 { // _Gdead, _Gidle
				n++
			}
		}
	}
	if n >= 0 {
		out = append(out, n)
	}
	return out
}

func medianInts(s []int) float64 {
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c) == 0 {
		return 0
	}
	return float64(c[len(c)/2])
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// usage keeps readings of the collectors' CPU and memory at named points
// of the run, per host.
type usage struct {
	mu       sync.Mutex
	readings map[string]map[string]reading // point -> host -> reading
	points   []string
}

type reading struct {
	at time.Time
	harness.Usage
}

func newUsage() *usage { return &usage{readings: map[string]map[string]reading{}} }

// record reads h's running collector at point.
func (u *usage) record(t *testing.T, point string, h *host) {
	t.Helper()
	r, err := harness.ProcessUsage(h.proc().Pid())
	if err != nil {
		t.Errorf("%s: %v", h.name, err)
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.readings[point] == nil {
		u.readings[point] = map[string]reading{}
		u.points = append(u.points, point)
	}
	u.readings[point][h.name] = reading{time.Now(), r}
}

// recordAll reads every host at point.
func (u *usage) recordAll(t *testing.T, point string, f *fleet) {
	t.Helper()
	for _, h := range f.hosts {
		u.record(t, point, h)
	}
}

// spread is the total, mean and largest of per-host values.
type spread struct{ total, mean, most float64 }

func spreadOf(vs []float64) spread {
	var s spread
	for _, v := range vs {
		s.total += v
		s.most = max(s.most, v)
	}
	if len(vs) > 0 {
		s.mean = s.total / float64(len(vs))
	}
	return s
}

// cpu is the collectors' CPU between two points, in cores (CPU seconds a
// second), per host: the same processes at both points.
func (u *usage) cpu(from, to string) (spread, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var cores []float64
	for name, b := range u.readings[to] {
		a, ok := u.readings[from][name]
		if !ok || b.CPU < a.CPU {
			return spread{}, fmt.Errorf("%s: no reading at %q of the same collector", name, from)
		}
		cores = append(cores, (b.CPU-a.CPU).Seconds()/b.at.Sub(a.at).Seconds())
	}
	return spreadOf(cores), nil
}

// memory is the collectors' resident memory at point, and their peak
// (VmHWM), in MiB.
func (u *usage) memory(point string) (rss, peak spread) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var r, p []float64
	for _, x := range u.readings[point] {
		r = append(r, float64(x.RSS)/(1<<20))
		p = append(p, float64(x.PeakRSS)/(1<<20))
	}
	return spreadOf(r), spreadOf(p)
}

// report logs the CPU between each pair of points (the same collectors at
// both) and the memory at every point.
func (u *usage) report(t *testing.T, hosts int, phases ...[2]string) {
	t.Helper()
	var lines []string
	for _, ph := range phases {
		c, err := u.cpu(ph[0], ph[1])
		if err != nil {
			t.Error(err)
			continue
		}
		lines = append(lines, fmt.Sprintf("CPU from %s to %s: %.3f cores for %d hosts, %.4f a host on average, %.4f the most",
			ph[0], ph[1], c.total, hosts, c.mean, c.most))
	}
	u.mu.Lock()
	points := slices.Clone(u.points)
	u.mu.Unlock()
	for _, p := range points {
		rss, peak := u.memory(p)
		lines = append(lines, fmt.Sprintf("memory at %s: RSS %.0f MiB for %d hosts, %.1f MiB a host on average, %.1f the most; peak RSS %.1f MiB on average, %.1f the most",
			p, rss.total, hosts, rss.mean, rss.most, peak.mean, peak.most))
	}
	t.Logf("the hosts' collectors on this machine:\n  %s", strings.Join(lines, "\n  "))
}

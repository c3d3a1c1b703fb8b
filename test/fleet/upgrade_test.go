// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// upgradeWave is how many hosts a rolling upgrade restarts at a time.
const upgradeWave = 10

// upgrade is the rolling upgrade's timing.
type upgrade struct {
	start, end time.Time
	// gaps: each host's time from SIGTERM to the new collector running.
	longestGap time.Duration
	// exited is when each host's old collector had exited: it may still
	// collect (a telemetry sample) between SIGTERM and its exit.
	exited map[string]time.Time
}

// rollingUpgrade upgrades every host as a package upgrade does, upgradeWave
// hosts at a time: the collector stopped (SIGTERM; it keeps its queue on
// disk), the other build (another version) started on the same
// configuration, state and run directory. u records each host's usage of
// the old collector just before it stops.
func rollingUpgrade(t *testing.T, s settings, f *fleet, u *usage) *upgrade {
	t.Helper()
	up := &upgrade{start: time.Now(), exited: map[string]time.Time{}}
	var mu sync.Mutex
	for i := 0; i < len(f.hosts); i += upgradeWave {
		var wg sync.WaitGroup
		for _, h := range f.hosts[i:min(i+upgradeWave, len(f.hosts))] {
			wg.Go(func() {
				u.record(t, "old collector at its stop", h)
				stopped := time.Now()
				if h.proc().Stop(15 * time.Second) {
					t.Errorf("%s: the collector did not stop within 15s of SIGTERM", h.name)
				}
				exited := time.Now()
				h.start(t, s.upgrade)
				gap := time.Since(stopped)
				mu.Lock()
				up.longestGap = max(up.longestGap, gap)
				up.exited[h.name] = exited
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	up.end = time.Now()
	// unshare and sh exec the collector: its pid runs the new binary soon.
	harness.Eventually(t, 30*time.Second, "every host runs the upgrade", func() []string {
		var problems []string
		for _, h := range f.hosts {
			exe, err := os.Readlink("/proc/" + strconv.Itoa(h.proc().Pid()) + "/exe")
			if err != nil || exe != s.upgrade {
				problems = append(problems, fmt.Sprintf("%s runs %q (%v)", h.name, exe, err))
			}
		}
		return problems
	})
	t.Logf("rolling upgrade from %s to %s, %d hosts at a time: %v; at most %v from a host's stop to its new collector's start",
		s.collectorVersion, s.upgradeVersion, upgradeWave, up.end.Sub(up.start).Round(time.Second), up.longestGap.Round(time.Millisecond))
	return up
}

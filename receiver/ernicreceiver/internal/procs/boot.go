// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package procs // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/procs"

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// uptimeResolution is the unit of <root>/uptime: the kernel prints seconds
// with two decimals, truncated.
const uptimeResolution = 10 * time.Millisecond

// preciseBoot returns the boot time to about 10 ms, computed once: the
// current time less the first field of <root>/uptime (seconds since boot,
// 10 ms resolution, truncated) less that resolution, so that it is never
// later than the true boot time; and not before btime, which truncates the
// true boot time. It returns btime when <root>/uptime cannot be read or
// parsed or gives a boot time outside the second btime stands for.
func (t *Table) preciseBoot(btime time.Time) time.Time {
	if t.bootPrecise.IsZero() {
		t.bootPrecise = btime
		now := t.now() // before the read: a slow read makes the boot early, not late
		if up, ok := t.readUptime(); ok {
			boot := now.Add(-up - uptimeResolution)
			// The true boot is in [btime, btime+1 s): btime truncates. A
			// boot before btime is the resolution and the read's delay (or
			// another clock), one a second or more after is another clock
			// (a fake root, a time namespace the stat file does not share).
			if boot.After(btime) && boot.Before(btime.Add(time.Second)) {
				t.bootPrecise = boot
			}
		}
	}
	return t.bootPrecise
}

// readUptime returns the first field of <root>/uptime as a duration.
func (t *Table) readUptime() (time.Duration, bool) {
	data, err := os.ReadFile(t.root + "/uptime")
	if err != nil {
		return 0, false
	}
	field, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte(" "))
	secs, err := strconv.ParseFloat(string(field), 64)
	if err != nil || secs < 0 {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

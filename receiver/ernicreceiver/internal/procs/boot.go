// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package procs // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/procs"

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// uptimeResolution: the kernel prints uptime in seconds, two decimals, truncated.
const uptimeResolution = 10 * time.Millisecond

// preciseBoot returns the boot time to about 10 ms from <root>/uptime, never
// late; btime when uptime gives nothing within btime's second.
func (t *Table) preciseBoot(btime time.Time) time.Time {
	if t.bootPrecise.IsZero() {
		t.bootPrecise = btime
		now := t.now() // before the read: a slow read makes the boot early, not late
		if up, ok := t.readUptime(); ok {
			boot := now.Add(-up - uptimeResolution)
			// Outside btime's second the read was slow or the clock is another's.
			if boot.After(btime) && boot.Before(btime.Add(time.Second)) {
				t.bootPrecise = boot
			}
		}
	}
	return t.bootPrecise
}

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

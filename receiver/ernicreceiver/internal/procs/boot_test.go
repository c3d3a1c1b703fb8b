// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package procs

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PreciseStart takes the boot time from <root>/uptime: the current time less
// the uptime less its 10 ms resolution, inside the second btime truncates
// (a boot just before btime is btime);
// an uptime that does not fit that second, or none, leaves it at Start.
func TestPreciseStart(t *testing.T) {
	for _, tc := range []struct {
		name, uptime string // "" writes no uptime file
		want         time.Time
	}{
		// now 1500.70, uptime 500.37: boot 1000.33, less 10 ms; + 2.50 s.
		{"fraction of btime's second", "500.37 1800.11\n", time.Unix(1002, 820_000_000)},
		{"boot 10 ms before btime: btime", "500.70 0.00\n", time.Unix(1002, 500_000_000)},
		{"boot 0.98 s after btime", "499.71 0.00\n", time.Unix(1003, 480_000_000)},
		{"boot 1.3 s after btime: another clock", "499.40 0.00\n", time.Unix(1002, 500_000_000)},
		{"boot 3 s before btime: another clock", "503.70 0.00\n", time.Unix(1002, 500_000_000)},
		{"garbage", "up 5 days\n", time.Unix(1002, 500_000_000)},
		{"negative", "-3.00 0.00\n", time.Unix(1002, 500_000_000)},
		{"no uptime file", "", time.Unix(1002, 500_000_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.WriteFile(root+"/stat", []byte("btime 1000\n"), 0o644))
			require.NoError(t, os.Mkdir(root+"/77", 0o755))
			require.NoError(t, os.WriteFile(root+"/77/stat", []byte("77 (w) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 250 0\n"), 0o644))
			if tc.uptime != "" {
				require.NoError(t, os.WriteFile(root+"/uptime", []byte(tc.uptime), 0o644))
			}
			tab, err := New(root)
			require.NoError(t, err)
			tab.now = func() time.Time { return time.Unix(1500, 700_000_000) }
			p, err := tab.Lookup(77)
			require.NoError(t, err)
			assert.Equal(t, time.Unix(1002, 500_000_000), p.Start, "btime + 250 ticks")
			assert.Equal(t, tc.want, p.PreciseStart)

			// Computed once: a later uptime file changes nothing.
			require.NoError(t, os.WriteFile(root+"/uptime", []byte("400.00 0.00\n"), 0o644))
			p, err = tab.Lookup(77)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.PreciseStart)
		})
	}
}

// On the real /proc, the precise start of this process is within the second
// btime truncates, after Start, and not after now.
func TestPreciseStartRealProc(t *testing.T) {
	tab, err := New("/proc")
	require.NoError(t, err)
	p, err := tab.Lookup(os.Getpid())
	require.NoError(t, err)
	require.True(t, p.Alive)
	assert.False(t, p.PreciseStart.Before(p.Start), "PreciseStart %s before Start %s", p.PreciseStart, p.Start)
	assert.True(t, p.PreciseStart.Before(p.Start.Add(time.Second)), "PreciseStart %s a second or more after Start %s", p.PreciseStart, p.Start)
	assert.False(t, p.PreciseStart.After(time.Now()))
}

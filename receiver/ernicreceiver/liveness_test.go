// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that crashed and whose pid an unrelated process got reads as
// down: the process at the pid started after the server's last stats
// write and has not written since, or its comm is not the server's.
func TestPidReuseReadsDown(t *testing.T) {
	for _, tc := range []struct {
		name, comm string
	}{
		{"another comm", "bash"},
		{"same comm, started after the last write", "rocm ernic (w)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "basic")
			now := scrapeNow
			s := newTestScraper(t, f.config(), &now)
			md := scrapeOK(t, s)
			require.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))

			// The server dies; an unrelated process gets pid 4117 at
			// boot+702 s. The stats file stays as the server left it.
			f.setProcComm(t, 4117, tc.comm, 70200)
			now = now.Add(5 * time.Second)
			md, err := s.scrape(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "instance 2: pid 4117 is not its server")
			assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
			assert.Empty(t, points(md, "ernic.instance.uptime", "ernic.id", "2"))
			assert.Empty(t, points(md, "ernic.commands", "ernic.id", "2"), "the dead server's file is not published")
			assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "1"), "the other instance is unaffected")
		})
	}

	// A receiver that never saw the server cannot tell a reused pid from a
	// live server whose file was touched back (TestStatsOlderThanProcess):
	// that case is reported, and up stays 1.

	// A server restarted by hot-reload (a new pid) that writes is up.
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	scrapeOK(t, s)
	f.setProcComm(t, 4300, "rocm ernic (w)", 70200)
	f.write(t, "instances.json", `{"instances":[{"id":2,"role":"worker","pid":4300,"mac":"m","vm":null}]}`, now)
	f.touch(t, "2.stats", time.Unix(bootTime+703, 0))
	now = now.Add(5 * time.Second)
	md := scrapeOK(t, s)
	assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
	assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"))
}

// A stats file with an mtime in the future (a clock stepped back, a file
// touched by hand) says nothing of when the server last wrote: it was
// written at the latest when it was first read. A process that got the
// server's pid after that reads as down, as with a file of a past mtime
// (found by the soak: the future mtime read as a write after the decoy
// started).
func TestPidReuseAfterFutureMtimeReadsDown(t *testing.T) {
	f := newFixture(t, "basic")
	f.touch(t, "2.stats", scrapeNow.Add(3*time.Hour))
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	md, err := s.scrape(context.Background())
	require.ErrorContains(t, err, "in the future")
	require.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))

	// The server dies; a process of the same command name gets pid 4117.
	// The file, unchanged, is read again every scrape (its mtime is ahead).
	f.setProcComm(t, 4117, "rocm ernic (w)", 70200)
	for range 3 {
		now = now.Add(5 * time.Second)
		md, err = s.scrape(context.Background())
		require.Error(t, err)
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
	}
}

// The server writes its file, dies, and the receiver reads that last file
// while the pid is dead; then a process with a command name of its own gets
// the pid, started (as /proc tells it, btime having whole seconds) before
// that last write. Its command name gives it away: the file accepted while
// the pid was dead did not make the dead process's empty command name the
// server's (found by the soak: up = 1 for a decoy named ernic-decoy).
func TestPidReuseAfterDeadReadReadsDown(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	md := scrapeOK(t, s)
	require.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))

	// Its last write at boot+700.95 s, then it dies.
	f.touch(t, "2.stats", time.Unix(bootTime+700, 950_000_000))
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "4117")))
	now = now.Add(time.Second)
	md = scrapeOK(t, s)
	require.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
	require.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"), "the last file is published with up 0")

	// The decoy gets pid 4117, its start read as boot+700.90 s.
	f.setProcComm(t, 4117, "ernic-decoy", 70090)
	for i := range 3 {
		now = now.Add(time.Second)
		md, err := s.scrape(context.Background())
		require.Error(t, err)
		if i == 0 { // then rate-limited
			assert.ErrorContains(t, err, `instance 2: pid 4117 is not its server: its command name "ernic-decoy" is not the server's "rocm ernic (w)"`)
		}
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"), "scrape %d", i)
	}
}

// A process with the server's own command name that got the pid less than a
// second after the server's last write reads as down: its start is taken to
// about 20 ms (procs.Process.PreciseStart, from <proc_dir>/uptime), where
// btime's whole seconds put it before that write (noticed at stop 26: with
// a btime fraction above the soak decoy's delay, pid_reuse_up could flake).
func TestPidReuseWithinBtimeSecondReadsDown(t *testing.T) {
	f := newFixture(t, "basic")
	// The machine booted at btime + 0.3 s; the uptime file is read once, at
	// the first lookup.
	up := time.Since(time.Unix(bootTime, 300_000_000)).Seconds()
	require.NoError(t, os.WriteFile(filepath.Join(f.procDir, "uptime"), []byte(strconv.FormatFloat(up, 'f', 2, 64)+" 0.00\n"), 0o644))
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	require.Equal(t, int64(1), intVal(t, scrapeOK(t, s), "ernic.instance.up", "ernic.id", "2"))

	// Its last write at boot+700.95 s, then it dies.
	f.touch(t, "2.stats", time.Unix(bootTime+700, 950_000_000))
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "4117")))
	now = now.Add(time.Second)
	require.Equal(t, int64(0), intVal(t, scrapeOK(t, s), "ernic.instance.up", "ernic.id", "2"))

	// A process of the same command name gets pid 4117 at boot+701.09 s or
	// later: btime + 700.80 s as ticks after btime, before the last write.
	f.setProcComm(t, 4117, "rocm ernic (w)", 70080)
	for i := range 3 {
		now = now.Add(time.Second)
		md, err := s.scrape(context.Background())
		require.Error(t, err, "scrape %d", i)
		if i == 0 { // then rate-limited
			assert.ErrorContains(t, err, "instance 2: pid 4117 is not its server: the process at it started at ")
			assert.ErrorContains(t, err, ", after the server's last stats write at ")
		}
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"), "scrape %d", i)
	}
}

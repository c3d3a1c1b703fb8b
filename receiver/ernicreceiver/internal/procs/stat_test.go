// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package procs

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stat line of a real process (a shell), 52 fields.
const bashStat = "4242 (bash) S 4200 4242 4242 34816 4250 4194304 1289 4451 0 1 2 1 9 3 20 0 1 0 123456 9052160 1312 18446744073709551615 94213452255232 94213453170509 140724290498096 0 0 0 65536 3686404 1266761467 1 0 0 17 1 0 0 0 0 0 94213453410800 94213453459280 94213475614720 140724290504503 140724290504508 140724290504508 140724290506734 0\n"

func TestParseStat(t *testing.T) {
	st, err := parseStat([]byte(bashStat))
	require.NoError(t, err)
	assert.Equal(t, "bash", string(st.comm))
	assert.Equal(t, byte('S'), st.state)
	assert.Equal(t, uint64(123456), st.startTicks)

	// A command name may hold spaces and parentheses: the last ")" ends it.
	st, err = parseStat([]byte("7 (a) b (c)) Z 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 98765 0 0\n"))
	require.NoError(t, err)
	assert.Equal(t, "a) b (c)", string(st.comm))
	assert.Equal(t, byte('Z'), st.state)
	assert.Equal(t, uint64(98765), st.startTicks)

	// X (dead) is parsed as such; Lookup counts it as dead like Z.
	st, err = parseStat([]byte("7 (x) X 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n"))
	require.NoError(t, err)
	assert.Equal(t, byte('X'), st.state)

	// starttime as the last field, ending the line.
	st, err = parseStat([]byte("7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n"))
	require.NoError(t, err)
	assert.Equal(t, uint64(5), st.startTicks)

	for _, bad := range []string{
		"",
		"garbage",
		"7 x) R 1",
		"7 (x)R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
		"7 (x) RS 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
		"7 (x) 0 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",   // state not a letter
		"7 (x)_S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n", // no space after the name
		"1 (x)",
		"1 (x) ",
		"7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0",                      // 21 fields
		"7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",                    // cut in or after starttime: maybe 5..., not 5
		"7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5",                   // negative
		"7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551616", // overflow
		"7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0  5",                   // empty field
	} {
		_, err := parseStat([]byte(bad))
		assert.ErrorIs(t, err, errStatFormat, "%q", bad)
	}
}

// The parser agrees with procfs' Proc.Stat on every process this test can
// see in the real /proc: command name and start time.
func TestParseStatAgreesWithProcfs(t *testing.T) {
	pfs, err := procfs.NewFS("/proc")
	require.NoError(t, err)
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	compared := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		p, err := pfs.Proc(pid)
		if err != nil {
			continue
		}
		want, err := p.Stat()
		if err != nil {
			continue
		}
		got, err := parseStat(data)
		require.NoError(t, err, "%s", data)
		assert.Equal(t, want.Comm, string(got.comm), "pid %d", pid)
		assert.Equal(t, want.Starttime, got.startTicks, "pid %d", pid)
		// (The state may change between the two reads.)
		compared++
	}
	assert.GreaterOrEqual(t, compared, 1, "this test's own process at least")
}

// Lookup of a steady process allocates nothing: the stat file is read into
// the Table's buffer and the command name is interned.
func TestLookupAllocs(t *testing.T) {
	tab, err := New(fakeProc)
	require.NoError(t, err)
	_, err = tab.Lookup(4100)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		p, err := tab.Lookup(4100)
		if err != nil || !p.Alive {
			t.Fatal(p, err)
		}
	})
	// os.Open's (the path, the *File and its cleanup): nothing per field.
	// (procfs' Proc and Proc.Stat: 30.)
	assert.LessOrEqual(t, allocs, 5.0)
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(bashStat))
	f.Add([]byte("7 (a) b (c)) Z 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 98765 0 0\n"))
	f.Add([]byte("1 () R"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseStat(data)
		if err != nil {
			return
		}
		if len(st.comm) > len(data) || st.state == 0 {
			t.Fatalf("%q: %+v", data, st)
		}
	})
}

// A stat file cut short in starttime (the kernel's always goes on to field
// 52 and a newline) is an error, as it was with procfs, not a start time
// of a few ticks after boot that would read as a pid reused.
func TestLookupTruncatedStat(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(root+"/stat", []byte("btime 100\n"), 0o644))
	require.NoError(t, os.Mkdir(root+"/1", 0o755))
	require.NoError(t, os.Mkdir(root+"/77", 0o755))
	full := "77 (x) S 1 77 77 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 1 0 123456 123456789 1000\n"
	require.NoError(t, os.WriteFile(root+"/77/stat", []byte(full[:strings.Index(full, "123456 ")+2]), 0o644))
	tab, err := New(root)
	require.NoError(t, err)
	p, err := tab.Lookup(77)
	require.ErrorIs(t, err, errStatFormat)
	assert.Equal(t, Process{Alive: true}, p)
}

// Lookup reads a stat file of up to maxStatBytes bytes inclusive, and a
// short file after a long one into the same buffer.
func TestLookupStatSizes(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(root+"/stat", []byte("btime 100\n"), 0o644))
	require.NoError(t, os.Mkdir(root+"/1", 0o755))
	require.NoError(t, os.Mkdir(root+"/77", 0o755))
	tab, err := New(root)
	require.NoError(t, err)
	const head, tail = "77 (", ") S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 250 0\n"
	for _, size := range []int{100, 511, 512, 513, 1500, maxStatBytes - 1, maxStatBytes, 300} {
		comm := strings.Repeat("c", size-len(head)-len(tail))
		require.NoError(t, os.WriteFile(root+"/77/stat", []byte(head+comm+tail), 0o644))
		p, err := tab.Lookup(77)
		require.NoError(t, err, "%d bytes", size)
		assert.Equal(t, Process{Alive: true, Start: time.Unix(102, 500_000_000), PreciseStart: time.Unix(102, 500_000_000), Comm: comm}, p, "%d bytes", size)
	}
	for _, size := range []int{maxStatBytes + 1, maxStatBytes + 1000, 100_000} {
		comm := strings.Repeat("c", size-len(head)-len(tail))
		require.NoError(t, os.WriteFile(root+"/77/stat", []byte(head+comm+tail), 0o644))
		p, err := tab.Lookup(77)
		require.ErrorContains(t, err, "larger than", "%d bytes", size)
		assert.Equal(t, Process{Alive: true}, p)
	}
}

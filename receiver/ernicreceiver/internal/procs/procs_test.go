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

// fakeProc is the receiver's fake /proc.
const fakeProc = "../../testdata/proc/basic"

func TestLookupFakeProc(t *testing.T) {
	tab, err := New(fakeProc)
	require.NoError(t, err)
	boot, err := tab.BootTime()
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1767225000, 0), boot)

	p, err := tab.Lookup(4100)
	require.NoError(t, err)
	assert.Equal(t, Process{Alive: true, Start: time.Unix(1767225010, 0), PreciseStart: time.Unix(1767225010, 0), Comm: "rocm-ernic"}, p, "btime + 1000 ticks of 10 ms; no uptime file: PreciseStart is Start")

	p, err = tab.Lookup(4117)
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1767225025, 500_000_000), p.Start, "comm with spaces and parentheses")
	assert.Equal(t, "rocm ernic (w)", p.Comm)

	p, err = tab.Lookup(4200)
	require.NoError(t, err)
	assert.Equal(t, Process{}, p, "a zombie is dead")

	p, err = tab.Lookup(99999)
	require.NoError(t, err)
	assert.Equal(t, Process{}, p, "no /proc entry: dead")

	p, err = tab.Lookup(0)
	require.NoError(t, err)
	assert.False(t, p.Alive, "no pid in the manifest")
}

func TestLookupUnreadableStat(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(root+"/stat", []byte("btime 100\n"), 0o644))
	require.NoError(t, os.Mkdir(root+"/77", 0o755))
	require.NoError(t, os.WriteFile(root+"/77/stat", []byte("garbage"), 0o644))
	tab, err := New(root)
	require.NoError(t, err)
	p, err := tab.Lookup(77)
	require.Error(t, err)
	assert.Equal(t, Process{Alive: true}, p, "the directory exists: alive, start unknown")
}

func TestLookupRealProc(t *testing.T) {
	tab, err := New("/proc")
	require.NoError(t, err)
	p, err := tab.Lookup(os.Getpid())
	require.NoError(t, err)
	assert.True(t, p.Alive)
	// The test process started within the last hour and not in the future.
	assert.WithinDuration(t, time.Now().Add(-30*time.Minute), p.Start, 31*time.Minute)
}

func TestNewRejectsMissingRoot(t *testing.T) {
	_, err := New("/nonexistent/proc")
	require.ErrorContains(t, err, `proc_dir "/nonexistent/proc"`)
}

// With <root>/1 not visible (hidepid), a missing process is unknown, not
// dead; a visible one is looked up as usual.
func TestLookupHidden(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(fakeProc)))
	tab, err := New(root)
	require.NoError(t, err)
	assert.False(t, tab.Hidden())
	require.NoError(t, os.RemoveAll(root+"/1"))
	tab, err = New(root)
	require.NoError(t, err)
	assert.True(t, tab.Hidden())
	p, err := tab.Lookup(99999)
	require.NoError(t, err)
	assert.Equal(t, Process{Unknown: true}, p)
	p, err = tab.Lookup(4100)
	require.NoError(t, err)
	assert.True(t, p.Alive)
}

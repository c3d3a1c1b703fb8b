// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package procs

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A real process's stat file is kept open from one lookup to the next and
// read again; the process a zombie, then reaped: dead both times, and the
// kept file of the reaped one is let go.
func TestKeptStatFileFollowsTheProcess(t *testing.T) {
	tab, err := New("/proc")
	require.NoError(t, err)
	t.Cleanup(tab.Close)
	require.True(t, tab.files.on, "/proc is a proc filesystem")

	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid

	first, err := tab.Lookup(pid)
	require.NoError(t, err)
	require.True(t, first.Alive)
	require.Contains(t, tab.files.fds, pid, "kept after the first lookup")
	fd := tab.files.fds[pid].fd
	again, err := tab.Lookup(pid)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Equal(t, fd, tab.files.fds[pid].fd, "read through the same file")

	require.NoError(t, cmd.Process.Kill())
	require.Eventually(t, func() bool {
		p, err := tab.Lookup(pid)
		return err == nil && p == Process{}
	}, 5e9, 1e7, "a zombie is dead")
	require.Contains(t, tab.files.fds, pid, "a zombie's file still reads")

	_ = cmd.Wait() // reaped: the kept file reads ESRCH, the path is gone
	p, err := tab.Lookup(pid)
	require.NoError(t, err)
	assert.Equal(t, Process{}, p)
	assert.NotContains(t, tab.files.fds, pid, "the reaped process's file is closed")
}

// CloseUnused closes the files of pids not looked up since its last call.
func TestCloseUnused(t *testing.T) {
	tab, err := New("/proc")
	require.NoError(t, err)
	t.Cleanup(tab.Close)
	self, parent := os.Getpid(), os.Getppid()
	for _, pid := range []int{self, parent} {
		_, err := tab.Lookup(pid)
		require.NoError(t, err)
	}
	tab.CloseUnused() // both read since the start
	assert.Len(t, tab.files.fds, 2)
	_, err = tab.Lookup(self)
	require.NoError(t, err)
	tab.CloseUnused() // parent not read since the last call
	assert.Contains(t, tab.files.fds, self)
	assert.NotContains(t, tab.files.fds, parent)
	tab.Close()
	assert.Empty(t, tab.files.fds)
	p, err := tab.Lookup(self)
	require.NoError(t, err)
	assert.True(t, p.Alive, "usable after Close")
}

// A fake /proc of plain files keeps nothing open: a test that replaces a
// file must see the new one.
func TestFakeProcKeepsNothing(t *testing.T) {
	tab, err := New(fakeProc)
	require.NoError(t, err)
	assert.False(t, tab.files.on)
	_, err = tab.Lookup(4100)
	require.NoError(t, err)
	assert.Empty(t, tab.files.fds)
}

// BenchmarkLookup: one lookup of a live process under /proc, with its stat
// file kept open (as the receiver looks up each instance every scrape)
// and opened each time.
func BenchmarkLookup(b *testing.B) {
	for _, kept := range []bool{true, false} {
		name := "opened"
		if kept {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			tab, err := New("/proc")
			require.NoError(b, err)
			defer tab.Close()
			tab.files.on = kept
			pid := os.Getppid()
			b.ReportAllocs()
			for b.Loop() {
				if p, err := tab.Lookup(pid); err != nil || !p.Alive {
					b.Fatalf("%+v %v", p, err)
				}
			}
		})
	}
}

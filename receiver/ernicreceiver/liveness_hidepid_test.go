// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// /proc mounted hidepid=invisible with the collector unprivileged:
// <proc_dir>/stat is readable but <proc_dir>/1 is not there. The receiver
// logs it once with the fix, and an instance whose process cannot be seen
// has no ernic.instance.up (its liveness cannot be known), not up=0.
func TestHidepidLivenessUnknown(t *testing.T) {
	f := newFixture(t, "basic")
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "1")))
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "4117"))) // root's server: hidden
	now := scrapeNow
	s, logs := observedScraper(t, f.config(), &now, zap.NewAtomicLevelAt(zap.WarnLevel))
	for range 2 {
		md, _ := s.scrape(context.Background())
		assert.Empty(t, points(md, "ernic.instance.up", "ernic.id", "2"), "liveness unknown: no up point")
		assert.Empty(t, points(md, "ernic.instance.uptime", "ernic.id", "2"))
		assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "1"), "a visible process is still up")
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "3"), "a visible zombie is still down")
		assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"), "its counters are published")
		now = now.Add(5 * time.Second)
	}
	hp := logs.FilterMessageSnippet("hidepid")
	require.Equal(t, 1, hp.Len(), "%v", logs.All())
	assert.Contains(t, hp.All()[0].Message, "mount -o remount")

	// Without hidepid (the fixture has <proc_dir>/1) a missing process is
	// down.
	f = newFixture(t, "basic")
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "4117")))
	now = scrapeNow
	s, logs = observedScraper(t, f.config(), &now, zap.NewAtomicLevelAt(zap.WarnLevel))
	md, _ := s.scrape(context.Background())
	assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
	assert.Zero(t, logs.FilterMessageSnippet("hidepid").Len())
}

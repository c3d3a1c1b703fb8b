// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestFileStorageConfigDeliversAcrossRestart: the remote-write config of the
// packages before queue_storage, its queue on file_storage, still delivers.
// In an outage its queue fills on disk, and the collector is killed and
// started again on it; in a second outage it is killed and started with
// the shipped config (queue_storage, the same queue files). After each,
// once Prometheus is back, every scrape before the kill is there.
func TestFileStorageConfigDeliversAcrossRestart(t *testing.T) {
	t.Parallel()
	r := newRemoteWrite(t, sim.Options{Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 17})
	shipped := r.args
	override := harness.WriteFile(t, "rw-e2e.yaml", rwOverride)
	r.args = []string{"--config", filepath.Join(harness.RepoRoot(t), "test", "e2e", "testdata", "file-storage-remote-write.yaml"), "--config", override}
	c := r.startCollector()
	ctx := context.Background()
	const sel = `ernic_stats_writes_total{ernic_id="2"}`
	r.waitFresh(ctx, waitTimeout, sel, "data in Prometheus")

	// outage stops Prometheus for 15 s, kills the collector 10 s into it
	// and starts it again with args, and checks, once the backlog is in
	// Prometheus, every scrape from a second before the outage to 3 s
	// before the kill (the merge window and a scrape that may not have
	// reached the disk).
	outage := func(what string, args []string) {
		t.Helper()
		down := time.Now()
		r.prom.Stop()
		time.Sleep(10 * time.Second)
		if err := c.Kill(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		queue, _ := filepath.Glob(filepath.Join(r.stateDir, "queue", "exporter_remote_write_*"))
		if len(queue) != 1 {
			t.Fatalf("%s: the queue file of remote_write under %s: %v, want one", what, r.stateDir, queue)
		}
		if fi, err := os.Stat(queue[0]); err != nil || fi.Size() == 0 {
			t.Fatalf("%s: queue file %s: %v", what, queue[0], err)
		}
		r.args = args
		c = r.startCollector()
		time.Sleep(time.Until(down.Add(15 * time.Second)))
		r.prom.Start()
		r.waitFresh(ctx, 60*time.Second, sel, what+": the backlog in Prometheus")

		from, to := down.Add(-time.Second), killed.Add(-3*time.Second)
		m, err := r.prom.RawSamples(ctx, sel, to.Sub(from), to)
		if err != nil || len(m) != 1 {
			t.Fatalf("%s: raw samples of %s: %v %v", what, sel, m, err)
		}
		samples := m[0].Values
		t.Logf("%s: %d samples of %s from %s to %s (outage from %s, killed at %s)", what, len(samples), sel,
			from.Format("15:04:05.000"), to.Format("15:04:05.000"), down.Format("15:04:05.000"), killed.Format("15:04:05.000"))
		if want := int(to.Sub(from)/rwInterval) - 1; len(samples) < want {
			t.Errorf("%s: %d samples, want at least %d: the queue lost them", what, len(samples), want)
		}
		for _, g := range gaps(samples, rwInterval) {
			t.Errorf("%s: %d scrapes missing from %s to %s", what, g.missing, g.from.Format("15:04:05.000"), g.to.Format("15:04:05.000"))
		}
	}
	outage("file_storage, restarted", r.args)
	time.Sleep(3 * rwInterval)
	outage("file_storage, restarted on the shipped config", shipped)
}

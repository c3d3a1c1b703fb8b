// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestOTLPHTTPKilledDuringOutage: config/otlphttp.yaml (otlp_http_durable,
// the persistent queue) sends to a real Prometheus 3 configured with
// deploy/prometheus/otlp.yml; Prometheus stops, the collector is killed
// (SIGKILL) during the outage and started again on the same state
// directory, then Prometheus comes back. The request that was being sent
// at the kill goes out first, in order, so no request is dropped and
// ernic_instances has a sample for every scrape but those of the seconds
// the collector was not running.
func TestOTLPHTTPKilledDuringOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := harness.RepoRoot(t)
	conf, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "otlp.yml"))
	if err != nil {
		t.Fatal(err)
	}
	p := harness.StartPrometheus(t, harness.Prometheus3Binary(t), "", 60*time.Second, string(conf), "--web.enable-otlp-receiver")

	runDir, state := t.TempDir(), t.TempDir()
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 47})
	override := fastQueueOverride(t, "otlp_http_durable", 200*time.Millisecond, "")
	env := []string{"ERNIC_RUN_DIR=" + runDir, "ERNIC_OTLP_ENDPOINT=" + p.URL("/api/v1/otlp"), "ERNIC_STATE_DIR=" + state}
	config := filepath.Join(root, "config", "otlphttp.yaml")
	damaged := damageQueue(t, state, "otlp_http_durable")
	log := &harness.LockedBuffer{}
	started := time.Now()
	first := runCollectorLog(t, env, log, config, override)
	const selector = `ernic_instances{job="ernic"}`
	eventually(t, waitTimeout, "first delivery", func() []string {
		if v, err := p.Vector(ctx, selector, time.Now()); err != nil || len(v) == 0 {
			return []string{fmt.Sprintf("no %s yet (%v)", selector, err)}
		}
		return nil
	})
	t.Logf("first batch in Prometheus %v after the start on a damaged queue file", time.Since(started).Round(10*time.Millisecond))
	checkSetAside(t, damaged, log.String())
	time.Sleep(3 * time.Second)

	p.Stop()
	down := time.Now()
	time.Sleep(5 * time.Second)
	killed := time.Now()
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	runCollectorLog(t, env, log, config, override)
	restarted := time.Now()
	time.Sleep(2 * time.Second)
	p.Start()
	up := time.Now()

	// Every scrape from 3 s before the outage to 5 s after Prometheus came
	// back, one a second (no gap of 1.9 s: a lost request leaves 2 s),
	// except while no collector ran (kill to restart, plus the new one's
	// first scrape).
	end := up.Add(5 * time.Second)
	allowed := restarted.Sub(killed) + 2500*time.Millisecond
	eventually(t, 30*time.Second, "the scrapes of the outage and of the kill", func() []string {
		if time.Now().Before(end) {
			return []string{"waiting for " + end.Format("15:04:05")}
		}
		m, err := p.RawSamples(ctx, selector, end.Sub(down.Add(-3*time.Second)), end)
		if err != nil || len(m) != 1 {
			return []string{fmt.Sprintf("%d series of %s (%v)", len(m), selector, err)}
		}
		var gaps []string
		s := m[0].Values
		for i := 1; i < len(s); i++ {
			at, prev := s[i].Timestamp.Time(), s[i-1].Timestamp.Time()
			gap := at.Sub(prev)
			limit := 1900 * time.Millisecond
			if !prev.After(killed) && !at.Before(killed) {
				limit = allowed
			}
			if gap > limit {
				gaps = append(gaps, fmt.Sprintf("%v without a sample after %s", gap, prev.Format("15:04:05.000")))
			}
		}
		if len(s) == 0 || s[len(s)-1].Timestamp.Time().Before(up) {
			gaps = append(gaps, "no sample since Prometheus came back")
		}
		return gaps
	})
	if strings.Contains(log.String(), "Dropping data") {
		t.Errorf("a request was dropped:\n%s", grepLines(log.String(), "Dropping data"))
	}
	t.Logf("outage %v, collector killed %v into it and back after %v; no request dropped",
		up.Sub(down).Round(100*time.Millisecond), killed.Sub(down).Round(100*time.Millisecond), restarted.Sub(killed).Round(time.Millisecond))
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

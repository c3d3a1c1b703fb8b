// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// startHostCollector starts otelcol-ernic with the configs and the
// environment env on a host called host (harness.HostCollector).
func startHostCollector(t *testing.T, host string, env []string, configs ...string) *harness.Process {
	t.Helper()
	return harness.Start(t, harness.HostCollector(host, harness.CollectorBinary(t), env, configs...))
}

// timeDependent matches the families whose values move with the clock
// (uptime, stats age): compareHostSeries checks only that they are there.
var timeDependent = regexp.MustCompile(`_seconds$`)

// compareHostSeries lists how a backend's series of a host (got, by
// harness.SeriesKey) differ from those of the host's own endpoint (want): missing,
// extra, or with another value.
func compareHostSeries(want, got map[string]float64) []string {
	var problems []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			problems = append(problems, "missing "+k)
		case !timeDependent.MatchString(k[:strings.IndexByte(k+"{", '{')]) && g != w:
			problems = append(problems, fmt.Sprintf("%s = %v, the host's endpoint has %v", k, g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			problems = append(problems, "not on the host's endpoint: "+k)
		}
	}
	return problems
}

// backendSeries returns the ernic series of the host whose instance label
// is instance in p, by harness.SeriesKey, with their values, and the label names
// seen (for the note).
func backendSeries(ctx context.Context, p *harness.Prometheus, instance string) (map[string]float64, map[string]bool, error) {
	v, err := p.Vector(ctx, fmt.Sprintf(`{__name__=~"ernic_.+", instance=%q}`, instance), time.Now())
	if err != nil {
		return nil, nil, err
	}
	out, names := map[string]float64{}, map[string]bool{}
	for _, s := range v {
		out[harness.SeriesKey(s.Metric)] = float64(s.Value)
		for k := range s.Metric {
			names[string(k)] = true
		}
	}
	return out, names, nil
}

// startFleetHost starts host name of a fleet test: a simulator (2
// instances of 2 QPs, seed) into a run directory of its own, the pull
// collector (config/local.yaml) on a free port, and the remote-write
// collector (config/prometheus-remote-write.yaml) writing to writeURL, both
// with the host's name and the override config added, the remote-write
// collector also rwExtra.
func startFleetHost(ctx context.Context, t *testing.T, name string, seed int64, writeURL, override string, rwExtra ...string) *fleetHost {
	t.Helper()
	root := harness.RepoRoot(t)
	h := &fleetHost{name: name, pullPort: harness.FreePort(t)}
	h.runDir = t.TempDir()
	s, err := sim.New(sim.Options{RunDir: h.runDir, Instances: 2, QPs: 2, Interval: 200 * time.Millisecond, LIF: true, Seed: seed, Writes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	h.sim = s
	base := []string{"ERNIC_RUN_DIR=" + h.runDir}
	h.pull = startHostCollector(t, name, append(base, fmt.Sprintf("ERNIC_EXPORTER_PORT=%d", h.pullPort), fmt.Sprintf("ERNIC_HEALTH_PORT=%d", harness.FreePort(t))),
		filepath.Join(root, "config", "local.yaml"), override)
	h.rw = startHostCollector(t, name, append(base, "ERNIC_REMOTE_WRITE_URL="+writeURL, "ERNIC_STATE_DIR="+t.TempDir()),
		append([]string{filepath.Join(root, "config", "prometheus-remote-write.yaml"), override}, rwExtra...)...)
	return h
}

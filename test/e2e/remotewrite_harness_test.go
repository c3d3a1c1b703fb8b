// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The world of the remote-write tests: the simulator and its writes,
// Prometheus, the collector with config/prometheus-remote-write.yaml, and
// the checks the tests share.

// simWrite is one complete stats write of the simulator: when it was logged
// and the Write count it printed.
type simWrite struct {
	at    time.Time
	count uint64
}

var simWroteRE = regexp.MustCompile(`^wrote (\S+) write_count=(\d+)$`)

// simWrites is the simulator's Log: it keeps, per instance id, every write
// with the time it completed.
type simWrites struct {
	mu     sync.Mutex
	rest   []byte
	writes map[int][]simWrite
	other  []string
}

func (w *simWrites) Write(p []byte) (int, error) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rest = append(w.rest, p...)
	for {
		i := bytes.IndexByte(w.rest, '\n')
		if i < 0 {
			break
		}
		line := string(w.rest[:i])
		w.rest = w.rest[i+1:]
		m := simWroteRE.FindStringSubmatch(line)
		if m == nil {
			w.other = append(w.other, line)
			continue
		}
		id, err1 := strconv.Atoi(strings.TrimSuffix(filepath.Base(m[1]), ".stats"))
		n, err2 := strconv.ParseUint(m[2], 10, 64)
		if err1 != nil || err2 != nil {
			w.other = append(w.other, line)
			continue
		}
		if w.writes == nil {
			w.writes = map[int][]simWrite{}
		}
		w.writes[id] = append(w.writes[id], simWrite{now, n})
	}
	return len(p), nil
}

// of returns a copy of instance id's writes.
func (w *simWrites) of(id int) []simWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes[id])
}

// rwSetup is one remote-write test's world.
type rwSetup struct {
	t        *testing.T
	sim      *sim.Sim
	writes   *simWrites
	prom     *harness.Prometheus
	runDir   string
	stateDir string
	args     []string
	env      []string
}

// startRemoteWrite starts a simulator with o (RunDir and Log are set here),
// a Prometheus and the collector with the shipped remote-write config.
func startRemoteWrite(t *testing.T, o sim.Options) (*rwSetup, *harness.Process) {
	t.Helper()
	r := newRemoteWrite(t, o)
	return r, r.startCollector()
}

// newRemoteWrite is startRemoteWrite without the collector: the test can
// change r.env or r.stateDir first.
func newRemoteWrite(t *testing.T, o sim.Options) *rwSetup {
	t.Helper()
	harness.CollectorBinary(t)
	return newRemoteWriteTo(t, o, harness.StartRemoteWritePrometheus(t, "", "1d"))
}

// newRemoteWriteTo is newRemoteWrite writing to the Prometheus prom.
func newRemoteWriteTo(t *testing.T, o sim.Options, prom *harness.Prometheus) *rwSetup {
	t.Helper()
	r := &rwSetup{t: t, writes: &simWrites{}, runDir: t.TempDir(), stateDir: t.TempDir(), prom: prom}
	o.RunDir, o.Log = r.runDir, r.writes
	r.sim = harness.StartSim(t, o)
	r.args = []string{
		"--config", filepath.Join(harness.RepoRoot(t), "config", "prometheus-remote-write.yaml"),
		"--config", harness.WriteFile(t, "rw-e2e.yaml", rwOverride),
	}
	r.env = []string{
		"ERNIC_RUN_DIR=" + r.runDir,
		"ERNIC_REMOTE_WRITE_URL=" + r.prom.WriteURL(),
		"ERNIC_STATE_DIR=" + r.stateDir,
	}
	return r
}

// startCollector starts (or starts again) the collector, on the same state
// directory.
func (r *rwSetup) startCollector() *harness.Process {
	r.t.Helper()
	c := harness.StartCollector(r.t, r.args, r.env, nil, true)
	r.t.Cleanup(func() {
		if strings.Contains(strings.ToLower(c.Log.String()), "deprecat") {
			r.t.Errorf("the collector logged a deprecation warning with config/prometheus-remote-write.yaml:\n%s", c.Log.String())
		}
	})
	return c
}

// eventually is harness.Eventually.
func eventually(t *testing.T, timeout time.Duration, what string, check func() []string) {
	t.Helper()
	harness.Eventually(t, timeout, what, check)
}

// checkRemoteWritten compares every ernic_* series in Prometheus with the
// metric contract: each family present, each series with exactly the
// family's labels plus the host's job="ernic" and instance="<host name>"
// (docs/operations.md, Many hosts; no otel_scope_* or any other), every
// instance of the simulator present where it must be. A label with an
// empty value is not stored by Prometheus (an empty label is an absent
// one): that is only allowed for vm_name of an instance without a VM.
func checkRemoteWritten(v model.Vector, workers, all []string) []string {
	hostName, _ := os.Hostname()
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	byName := map[string][]*model.Sample{}
	for _, s := range v {
		name := string(s.Metric[model.MetricNameLabel])
		byName[name] = append(byName[name], s)
	}
	known := map[string]bool{}
	for _, f := range slices.Concat(contract, beyondContract) {
		known[f.name] = true
		series := byName[f.name]
		if len(series) == 0 {
			bad("%s: family missing", f.name)
			continue
		}
		ids := map[string]bool{}
		for _, s := range series {
			var names []string
			for l := range s.Metric {
				if l != model.MetricNameLabel {
					names = append(names, string(l))
				}
			}
			want := append(slices.Clone(f.labels), "instance", "job")
			if s.Metric["job"] != "ernic" || string(s.Metric["instance"]) != hostName {
				bad("%s: job %q, instance %q, want ernic and the host name %q", s.Metric, s.Metric["job"], s.Metric["instance"], hostName)
			}
			if f.name == "ernic_vm_attached" && s.Value == 0 && s.Metric["vm_name"] == "" {
				want = slices.DeleteFunc(want, func(l string) bool { return l == "vm_name" })
			}
			sort.Strings(names)
			sort.Strings(want)
			if !slices.Equal(names, want) {
				bad("%s: labels %v, want exactly %v", s.Metric, names, want)
			}
			ids[string(s.Metric["ernic_id"])] = true
		}
		if !slices.Contains(f.labels, "ernic_id") {
			if len(series) != 1 {
				bad("%s: %d series, want 1", f.name, len(series))
			}
			continue
		}
		// Every worker (attached, traffic) has every per-instance family;
		// the instance and device families have every instance.
		want := workers
		switch f.name {
		case "ernic_instance_up", "ernic_instance_uptime_seconds", "ernic_vm_attached",
			"ernic_connection_up", "ernic_qp_count", "ernic_stats_writes_total", "ernic_rdma_bytes_total":
			want = all
		}
		for _, id := range want {
			if !ids[id] {
				bad("%s: no series of ernic_id=%q", f.name, id)
			}
		}
	}
	for name := range byName {
		if !known[name] {
			bad("%s: family not in the metric contract", name)
		}
	}
	return problems
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// host is one host of the fleet: a simulated run directory, a state
// directory, and the collector (every process it ran, the last one the
// running one) with the shipped remote-write configuration, the fleet
// profile and the test's overrides (tenant header and the reference).
type host struct {
	name     string
	runDir   string
	writeURL string // a receiver, or the proxy in front of one
	proxy    *harness.RemoteWriteProxy
	env      []string
	configs  []string

	mu    sync.Mutex
	procs []*harness.Process
	bins  []string
}

// overrideConfig is the test's one addition to the shipped configurations:
// the tenant header, and a second remote_write into the reference
// Prometheus, which is never stopped and so holds every sample a host
// scraped, the host's own record. The reference's queue is on disk as the
// shipped one is: an in-memory queue drops the last scrape when the
// collector stops, the very scrape a restart puts at risk.
const overrideConfig = `extensions:
  queue_storage/reference:
    directory: ${env:ERNIC_STATE_DIR}/reference
    create_directory: true
exporters:
  remote_write:
    headers:
      THANOS-TENANT: ` + tenant + `
  remote_write/reference:
    endpoint: %s
    sending_queue:
      enabled: true
      storage: queue_storage/reference
      num_consumers: 1
      sizer: bytes
      queue_size: 268435456
      block_on_overflow: true
service:
  extensions: [queue_storage/queue, queue_storage/reference]
  pipelines:
    metrics:
      exporters: [remote_write, remote_write/reference]
`

// newHost prepares host i (not started): its simulator runs already.
func newHost(t *testing.T, i int, writeURL, override string, unitEnv []string) *host {
	t.Helper()
	root := harness.RepoRoot(t)
	h := &host{name: fmt.Sprintf("gpu-fleet-%03d", i), runDir: t.TempDir(), writeURL: writeURL}
	harness.StartSim(t, hostRunDir(h.runDir, int64(1000+i)))
	h.env = slices.Concat(unitEnv, []string{"ERNIC_RUN_DIR=" + h.runDir, "ERNIC_STATE_DIR=" + t.TempDir(), "ERNIC_REMOTE_WRITE_URL=" + writeURL,
		fmt.Sprintf("ERNIC_EXPORTER_PORT=%d", harness.FreePort(t))})
	h.configs = []string{filepath.Join(root, "config", "prometheus-remote-write.yaml"), filepath.Join(root, "config", "fleet.yaml"), override}
	return h
}

// start runs the collector bin on the host.
func (h *host) start(t *testing.T, bin string) {
	t.Helper()
	p := harness.Start(t, harness.HostCollector(h.name, bin, h.env, h.configs...))
	h.mu.Lock()
	defer h.mu.Unlock()
	h.procs = append(h.procs, p)
	h.bins = append(h.bins, bin)
}

// proc is the host's running (or last) collector.
func (h *host) proc() *harness.Process {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.procs[len(h.procs)-1]
}

// log is the output of every collector the host ran, in order.
func (h *host) log() string { return strings.Join(h.logs(), "") }

// logs is the output of each collector the host ran, in order.
func (h *host) logs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, p := range h.procs {
		out = append(out, p.Log.String())
	}
	return out
}

// own keeps the lines of the host's remote_write to the backend (not
// those of its reference's).
func (h *host) own(lines []logLine) []logLine {
	var out []logLine
	for _, l := range lines {
		if l.field("endpoint") == h.writeURL {
			out = append(out, l)
		}
	}
	return out
}

// fleet is the hosts; faults names the hosts that write through a proxy.
type fleet struct {
	hosts  []*host
	faults map[string]*host
}

// startFleet starts s.hosts hosts, ten a second, the hosts of
// faultHosts writing through a proxy each, the others each straight to a
// receiver, spread over the three as a balancer would.
func startFleet(t *testing.T, s settings, b *backend) *fleet {
	t.Helper()
	f := &fleet{faults: map[string]*host{}}
	unitEnv := harness.UnitEnvironment(t)
	override := harness.WriteFile(t, "fleet-test.yaml", fmt.Sprintf(overrideConfig, b.reference.WriteURL()))
	for i := range s.hosts {
		target := b.receivers[i%len(b.receivers)].WriteURL()
		var proxy *harness.RemoteWriteProxy
		if i < len(faultHosts) {
			proxy = harness.StartRemoteWriteProxy(t, target)
			target = proxy.URL
		}
		h := newHost(t, i, target, override, unitEnv)
		h.proxy = proxy
		if i < len(faultHosts) {
			h.name += "-" + faultHosts[i].name
			f.faults[faultHosts[i].name] = h
			faultHosts[i].prepare(h.proxy)
		}
		f.hosts = append(f.hosts, h)
		// Started at once: its local endpoint's port was free a moment ago.
		h.start(t, s.collector)
		if i%10 == 9 {
			time.Sleep(time.Second) // a collector's start takes about 0.3 s of CPU
		}
	}
	return f
}

// regular is every host but the one whose clock is off, whose samples
// the backend refuses.
func (f *fleet) regular() []*host {
	var out []*host
	for _, h := range f.hosts {
		if h != f.faults[skewedClock] {
			out = append(out, h)
		}
	}
	return out
}

// waitSeries waits until the querier holds every regular host's series,
// each with a sample within the last 30 s.
func (f *fleet) waitSeries(ctx context.Context, t *testing.T, b *backend, d time.Duration) int {
	t.Helper()
	var perHost int
	harness.Eventually(t, d, "every host's series through the querier", func() []string {
		v, err := b.query.Vector(ctx, fmt.Sprintf(`count by (instance) (last_over_time({__name__=~"ernic_.+", tenant_id=%q}[30s]))`, tenant), time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		want, err := b.reference.Vector(ctx, `count by (instance) (last_over_time({__name__=~"ernic_.+"}[30s]))`, time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		have := map[string]float64{}
		for _, s := range v {
			have[string(s.Metric["instance"])] = float64(s.Value)
		}
		wantBy := map[string]float64{}
		for _, s := range want {
			wantBy[string(s.Metric["instance"])] = float64(s.Value)
		}
		var problems []string
		for _, h := range f.regular() {
			if !h.proc().Running() {
				t.Fatalf("the collector of %s exited:\n%s", h.name, h.log())
			}
			if w := wantBy[h.name]; w == 0 || have[h.name] != w {
				problems = append(problems, fmt.Sprintf("%s: %v series through the querier, %v in the reference", h.name, have[h.name], w))
			}
			perHost = int(wantBy[h.name])
		}
		return problems
	})
	return perHost
}

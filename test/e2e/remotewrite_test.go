//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
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

// The remote-write tests run config/prometheus-remote-write.yaml as shipped,
// with a 1s scrape, against a real Prometheus (Debian's 2.42) with its
// remote-write receiver on, and query what Prometheus stored. The simulator
// runs in the test process (internal/sim). Each test has its own simulator,
// collector, Prometheus, ports and directories, so they run in parallel.

// rwInterval is the collection interval of the remote-write tests.
const rwInterval = time.Second

// rwOverride is merged over config/prometheus-remote-write.yaml: a 1s
// scrape with the per-opcode metric on (every family of the contract) and a
// short batch timeout, so that a sample is in Prometheus about 1s after its
// scrape.
const rwOverride = opcodeReceiver + `processors:
  batch:
    timeout: 100ms
`

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

// eventually calls check until it returns no problem, or fails the test with
// the last problems after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, check func() []string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		problems := check()
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(problems)
			if len(problems) > 40 {
				problems = append(problems[:40], fmt.Sprintf("... and %d more", len(problems)-40))
			}
			t.Fatalf("%s: not within %v:\n  %s", what, timeout, strings.Join(problems, "\n  "))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkRemoteWritten compares every ernic_* series in Prometheus with the
// metric contract: each family present, each series with exactly the
// family's labels plus the host's job="ernic" and instance="<host name>"
// (README, Many hosts; no otel_scope_* or any other), every
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

// TestRemoteWriteContract: every family of the metric contract reaches
// Prometheus by remote write with exactly its labels; worker counters have
// a rate; after the simulator's final write, the last values in Prometheus
// are the simulator's, for device, QP and LIF counters.
func TestRemoteWriteContract(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r, _ := startRemoteWrite(t, sim.Options{Instances: 3, QPs: 4, Interval: 500 * time.Millisecond, LIF: true, Seed: 11})
	ctx := context.Background()
	all, workers := []string{"1", "2", "3"}, []string{"2", "3"}

	var families int
	eventually(t, waitTimeout, "every family of the contract in Prometheus with its labels", func() []string {
		v, err := r.prom.Vector(ctx, `{__name__=~"ernic_.+"}`, time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		names := map[model.LabelValue]bool{}
		for _, s := range v {
			names[s.Metric[model.MetricNameLabel]] = true
		}
		families = len(names)
		return checkRemoteWritten(v, workers, all)
	})
	t.Logf("remote write: %d ernic_* families in Prometheus (contract %d + beyond %d), labels exact, after %v",
		families, len(contract), len(beyondContract), time.Since(start).Round(time.Millisecond))
	// Nothing else was written: no target_info, no other series (this
	// Prometheus scrapes nothing, not even itself).
	if v, err := r.prom.Vector(ctx, `{__name__=~".+",__name__!~"ernic_.+"}`, time.Now()); err != nil || len(v) > 0 {
		t.Errorf("series other than ernic_* in Prometheus (%v): %v", err, v)
	}
	for q, want := range map[string]float64{"ernic_instances": 3, "ernic_vms": 2} {
		if got, err := r.prom.ScalarAt(ctx, q, time.Now()); err != nil || got != want {
			t.Errorf("%s = %v (%v), want %v", q, got, err, want)
		}
	}

	eventually(t, waitTimeout, "rate(ernic_rdma_bytes_total[30s]) > 0 for the workers", func() []string {
		v, err := r.prom.Vector(ctx, `rate(ernic_rdma_bytes_total[30s]) > 0`, time.Now())
		if err != nil {
			return []string{err.Error()}
		}
		var problems []string
		for _, id := range workers {
			if !slices.ContainsFunc(v, func(s *model.Sample) bool { return string(s.Metric["ernic_id"]) == id }) {
				problems = append(problems, fmt.Sprintf("no rate > 0 for ernic_id=%s: %v", id, v))
			}
		}
		return problems
	})

	// The simulator's last write, then its values in Prometheus.
	if err := r.sim.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	snaps := map[string]sim.Stats{}
	for _, id := range all {
		n, _ := strconv.Atoi(id)
		st, ok := r.sim.Snapshot(n)
		if !ok {
			t.Fatalf("no snapshot of instance %s", id)
		}
		snaps[id] = st
	}
	last := func(selector string) (float64, error) {
		return r.prom.ScalarAt(ctx, fmt.Sprintf("last_over_time(%s[1m])", selector), time.Now())
	}
	eventually(t, waitTimeout, "the simulator's final write in Prometheus", func() []string {
		var problems []string
		for _, id := range all {
			sel := fmt.Sprintf(`ernic_stats_writes_total{ernic_id=%q}`, id)
			got, err := last(sel)
			if want := float64(snaps[id].WriteCount); err != nil || got != want {
				problems = append(problems, fmt.Sprintf("%s = %v (%v), want the final Write count %v", sel, got, err, want))
			}
		}
		return problems
	})
	t.Logf("final write in Prometheus %v after sim.Stop", time.Since(stopped).Round(time.Millisecond))

	compared := 0
	compare := func(selector string, want uint64) {
		t.Helper()
		got, err := last(selector)
		switch {
		case err != nil:
			t.Errorf("%s: %v", selector, err)
		case got != float64(want):
			t.Errorf("%s = %v in Prometheus, the simulator wrote %d", selector, got, want)
		}
		compared++
	}
	for _, id := range workers {
		d := snaps[id].Device
		sel := func(family string, more ...string) string {
			l := fmt.Sprintf("ernic_id=%q", id)
			for i := 0; i+1 < len(more); i += 2 {
				l += fmt.Sprintf(",%s=%q", more[i], more[i+1])
			}
			return family + "{" + l + "}"
		}
		compare(sel("ernic_rdma_bytes_sent_total"), d.BytesSent)
		compare(sel("ernic_rdma_bytes_write_total"), d.BytesRDMAWrite)
		compare(sel("ernic_rdma_bytes_total"), d.BytesSent+d.BytesReceived+d.BytesRDMARead+d.BytesRDMAWrite)
		compare(sel("ernic_ip_bytes_total"), d.IPBytesTx+d.IPBytesRx)
		compare(sel("ernic_commands_total"), d.Commands)
		compare(sel("ernic_mmio_reads_total"), d.Bar0Reads+d.UARReads)
		compare(sel("ernic_flr_reset_total"), d.ResetCount)
		if len(snaps[id].QPs) == 0 {
			t.Errorf("instance %s: no QPs in the final snapshot", id)
		}
		for _, q := range snaps[id].QPs {
			h := strconv.FormatUint(uint64(q.Handle), 10)
			compare(sel("ernic_qp_bytes_sent_total", "qp", h), q.BytesSent)
			compare(sel("ernic_qp_wqes_processed_total", "qp", h), q.WQEsProcessed)
			compare(sel("ernic_qp_doorbell_send_total", "qp", h), q.DoorbellSend)
		}
		if len(snaps[id].LIF) == 0 {
			t.Errorf("instance %s: no LIF counters in the final snapshot", id)
		}
		for i, c := range snaps[id].LIF {
			if i%10 == 0 || c.Name == "rx_ucast_bytes" {
				compare(sel("ernic_lif_counter_total", "counter", c.Name), c.Value)
			}
		}
	}
	t.Logf("%d last values in Prometheus equal the simulator's final snapshot (device, QP and LIF counters of both workers)", compared)
}

// rawOf returns the single series' samples of a range query result.
func rawOf(t *testing.T, m model.Matrix, what string) []model.SamplePair {
	t.Helper()
	if len(m) != 1 {
		t.Fatalf("%s: %d series, want 1: %v", what, len(m), m)
	}
	return m[0].Values
}

// countAt returns the Write count instance id's file held at time at (the
// last write completed before it), from the simulator's log.
func countAt(writes []simWrite, at time.Time) (uint64, bool) {
	i := sort.Search(len(writes), func(i int) bool { return writes[i].at.After(at) })
	if i == 0 {
		return 0, false
	}
	return writes[i-1].count, true
}

// TestRemoteWriteCounterReset: a restart of instance 2 is exactly one
// counter reset in Prometheus, and none for the other instances; the raw
// samples are values the simulator wrote, and the increase over the window
// is the simulator's, less only the writes of the old process that no
// scrape saw.
func TestRemoteWriteCounterReset(t *testing.T) {
	t.Parallel()
	r, _ := startRemoteWrite(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, LIF: false, Seed: 5})
	ctx := context.Background()
	const family = "ernic_stats_writes_total"

	latest := func(id string) float64 {
		v, err := r.prom.ScalarAt(ctx, fmt.Sprintf("%s{ernic_id=%q}", family, id), time.Now())
		if err != nil {
			return -1
		}
		return v
	}
	eventually(t, waitTimeout, "worker counters in Prometheus", func() []string {
		if latest("2") < 4 || latest("3") < 4 {
			return []string{fmt.Sprintf("writes of 2: %v, of 3: %v", latest("2"), latest("3"))}
		}
		return nil
	})
	t0 := time.Now()
	time.Sleep(4 * rwInterval)

	before := len(r.writes.of(2))
	lastOld := latest("2")
	if err := r.sim.Restart(2); err != nil {
		t.Fatal(err)
	}
	w2 := r.writes.of(2)
	// Restart logs the old process's shutdown write, then the new one's
	// startup write (Write count 0).
	if len(w2) < before+2 || w2[before+1].count != 0 {
		t.Fatalf("unexpected simulator writes of instance 2 around the restart: %v", w2[max(0, before-2):])
	}
	oldFinal := w2[before].count
	// The new process's samples: below the last one seen of the old
	// process (which only went up from there), and a few writes in.
	eventually(t, waitTimeout, "instance 2's new counters in Prometheus", func() []string {
		if v := latest("2"); v < 4 || v >= lastOld {
			return []string{fmt.Sprintf("%s{ernic_id=\"2\"} = %v (old process: %v in Prometheus at the restart, ended at %d)", family, v, lastOld, oldFinal)}
		}
		return nil
	})
	time.Sleep(2 * rwInterval)
	t1 := time.Now()
	window := t1.Sub(t0).Truncate(time.Second) + time.Second
	ws := fmt.Sprintf("%ds", int(window.Seconds()))

	// resets(): exactly one for instance 2, none elsewhere, for the write
	// count and byte counters, over the window and over 5m (all the data:
	// Prometheus is younger than that).
	for _, q := range []struct{ fam, rng string }{
		{family, "5m"}, {family, ws}, {"ernic_rdma_bytes_total", ws}, {"ernic_ip_bytes_tx_total", "5m"},
	} {
		fam, ws := q.fam, q.rng
		v, err := r.prom.Vector(ctx, fmt.Sprintf("resets(%s[%s])", fam, ws), t1)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, s := range v {
			got[string(s.Metric["ernic_id"])] = float64(s.Value)
		}
		want := map[string]float64{"1": 0, "2": 1, "3": 0}
		if fam != family {
			want = map[string]float64{"2": 1, "3": 0} // the manager has no traffic (its counters stay 0)
			delete(got, "1")
		}
		if !mapsEqual(got, want) {
			t.Errorf("resets(%s[%s]) by ernic_id = %v, want %v", fam, ws, got, want)
		} else {
			t.Logf("resets(%s[%s]) by ernic_id = %v", fam, ws, got)
		}
	}

	// The raw samples of instance 2 over the window.
	m, err := r.prom.RawSamples(ctx, fmt.Sprintf("%s{ernic_id=\"2\"}", family), window, t1)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawOf(t, m, "instance 2's write count")
	drop := -1
	for i := 1; i < len(raw); i++ {
		if raw[i].Value < raw[i-1].Value {
			if drop >= 0 {
				t.Fatalf("instance 2's raw samples drop more than once: %v", raw)
			}
			drop = i
		}
	}
	if drop < 0 {
		t.Fatalf("instance 2's raw samples never drop: %v", raw)
	}
	first, pre, post, lastV := float64(raw[0].Value), float64(raw[drop-1].Value), float64(raw[drop].Value), float64(raw[len(raw)-1].Value)
	// Every sample is a Write count the simulator had written, in that
	// process, by the sample's scrape (allowing for a scrape that read the
	// file just after its timestamp, or kept the last complete read).
	w2 = r.writes.of(2)
	gens := [][]simWrite{w2[:before+1], w2[before+1:]}
	for i, sp := range raw {
		gen := gens[0]
		if i >= drop {
			gen = gens[1]
		}
		at := sp.Timestamp.Time()
		lo, _ := countAt(gen, at.Add(-2*rwInterval))
		hi, ok := countAt(gen, at.Add(rwInterval/2))
		if v := uint64(sp.Value); !ok || v < lo || v > hi {
			t.Errorf("instance 2 sample %d at %s: the simulator's file held %d..%d around then", v, at.Format("15:04:05.000"), lo, hi)
		}
	}
	// The increase: what the simulator wrote from the first sample to the
	// last is (oldFinal - first) + last; the samples show (pre - first) +
	// last. The difference is the old process's writes after its last
	// scrape, which no scrape can see.
	truth := (float64(oldFinal) - first) + lastV
	seen := (pre - first) + lastV
	inc, err := r.prom.ScalarAt(ctx, fmt.Sprintf("increase(%s{ernic_id=\"2\"}[%s])", family, ws), t1)
	if err != nil {
		t.Fatal(err)
	}
	span := raw[len(raw)-1].Timestamp.Sub(raw[0].Timestamp).Seconds()
	// Prometheus extrapolates the increase from the samples' span to the
	// window, by at most 1.1 average sample intervals at each end.
	avg := span / float64(len(raw)-1)
	maxInc := seen * math.Min(window.Seconds(), span+2.2*avg) / span
	t.Logf("instance 2 over %s: %d raw samples, first %v, last before restart %v, old process's final write %d, "+
		"first after restart %v, last %v; simulator increase %v, samples' increase %v (missed at the restart %v), increase() %v (extrapolated; at most %v)",
		ws, len(raw), first, pre, oldFinal, post, lastV, truth, seen, truth-seen, inc, maxInc)
	if truth-seen < 0 || truth-seen > 3 {
		t.Errorf("the samples miss %v writes of the old process at the restart; want 0..3 (sim interval 500ms, scrape 1s)", truth-seen)
	}
	if inc < seen-0.001 || inc > maxInc+0.001 {
		t.Errorf("increase(...[%s]) = %v, want between the samples' increase %v and its extrapolation %v", ws, inc, seen, maxInc)
	}

	// Instance 3: no reset, and the samples' increase is the simulator's.
	m, err = r.prom.RawSamples(ctx, fmt.Sprintf("%s{ernic_id=\"3\"}", family), window, t1)
	if err != nil {
		t.Fatal(err)
	}
	raw3 := rawOf(t, m, "instance 3's write count")
	for i := 1; i < len(raw3); i++ {
		if raw3[i].Value < raw3[i-1].Value {
			t.Errorf("instance 3's write count went down: %v -> %v", raw3[i-1].Value, raw3[i].Value)
		}
	}
	w3 := r.writes.of(3)
	for _, sp := range raw3 {
		lo, _ := countAt(w3, sp.Timestamp.Time().Add(-2*rwInterval))
		hi, _ := countAt(w3, sp.Timestamp.Time().Add(rwInterval/2))
		if v := uint64(sp.Value); v < lo || v > hi {
			t.Errorf("instance 3 sample %d at %s: the simulator's file held %d..%d around then", v, sp.Timestamp.Time().Format("15:04:05.000"), lo, hi)
		}
	}
	inc3, _ := r.prom.ScalarAt(ctx, fmt.Sprintf("increase(%s{ernic_id=\"3\"}[%s])", family, ws), t1)
	t.Logf("instance 3 over %s: %d raw samples %v -> %v, increase() %v", ws, len(raw3), raw3[0].Value, raw3[len(raw3)-1].Value, inc3)
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestRemoteWriteRemovedInstanceEnds: the series of an instance removed from
// the manifest end in Prometheus within about two scrapes plus the send
// delay, not after the five-minute lookback: the receiver flags them
// NoRecordedValue and remote write sends staleness markers.
func TestRemoteWriteRemovedInstanceEnds(t *testing.T) {
	t.Parallel()
	r, _ := startRemoteWrite(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, LIF: true, Seed: 9})
	ctx := context.Background()
	count := func(selector string) (float64, error) {
		v, err := r.prom.Vector(ctx, fmt.Sprintf("count(%s)", selector), time.Now())
		if err != nil || len(v) == 0 {
			return 0, err
		}
		return float64(v[0].Value), nil
	}
	var before float64
	eventually(t, waitTimeout, "instance 3's series in Prometheus", func() []string {
		n, err := count(`{__name__=~"ernic_.+",ernic_id="3"}`)
		up, _ := r.prom.ScalarAt(ctx, `ernic_instance_up{ernic_id="3"}`, time.Now())
		before = n
		if err != nil || n < 50 || up != 1 {
			return []string{fmt.Sprintf("%v series of instance 3 (%v), up %v", n, err, up)}
		}
		return nil
	})
	others, _ := count(`{__name__=~"ernic_.+",ernic_id!="3"}`)

	if err := r.sim.Remove(3); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	// Two scrapes, the batch timeout and a second for the queue, plus a
	// second of slack.
	limit := 2*rwInterval + 100*time.Millisecond + time.Second + time.Second
	var upGone, allGone time.Duration
	for time.Since(removed) < limit+10*time.Second && (upGone == 0 || allGone == 0) {
		now := time.Now()
		if upGone == 0 {
			if v, err := r.prom.Vector(ctx, `ernic_instance_up{ernic_id="3"}`, now); err == nil && len(v) == 0 {
				upGone = now.Sub(removed)
			}
		}
		if allGone == 0 {
			if n, err := count(`{__name__=~"ernic_.+",ernic_id="3"}`); err == nil && n == 0 {
				allGone = now.Sub(removed)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("instance 3 removed: ernic_instance_up{ernic_id=\"3\"} gone from instant queries after %v, all %v of its series after %v (limit %v)",
		upGone.Round(10*time.Millisecond), before, allGone.Round(10*time.Millisecond), limit)
	if upGone == 0 || upGone > limit {
		t.Errorf("ernic_instance_up{ernic_id=\"3\"} still answers %v after the instance left the manifest (gone after %v; limit %v): no staleness marker reached Prometheus",
			time.Since(removed).Round(time.Millisecond), upGone, limit)
	}
	if allGone == 0 || allGone > limit {
		t.Errorf("instance 3's series still answer %v after the instance left the manifest (gone after %v; limit %v)",
			time.Since(removed).Round(time.Millisecond), allGone, limit)
	}
	// The other instances' series stay.
	if n, err := count(`{__name__=~"ernic_.+",ernic_id!="3"}`); err != nil || n < others {
		t.Errorf("the other instances' series: %v (%v), were %v before the removal", n, err, others)
	}
	if v, err := r.prom.ScalarAt(ctx, "ernic_instances", time.Now()); err != nil || v != 2 {
		t.Errorf("ernic_instances = %v (%v) after the removal, want 2", v, err)
	}
}

// seriesGap is a hole in a series' samples.
type seriesGap struct {
	from, to time.Time
	missing  int
}

// gaps returns the holes longer than 1.5 intervals in samples, with the
// number of samples missing from each.
func gaps(samples []model.SamplePair, interval time.Duration) []seriesGap {
	var out []seriesGap
	for i := 1; i < len(samples); i++ {
		d := samples[i].Timestamp.Sub(samples[i-1].Timestamp)
		if d > interval*3/2 {
			out = append(out, seriesGap{samples[i-1].Timestamp.Time(), samples[i].Timestamp.Time(),
				int(math.Round(float64(d)/float64(interval))) - 1})
		}
	}
	return out
}

// TestRemoteWriteOutage: Prometheus is down for over a minute; during the
// outage the collector is killed (SIGKILL) and started again on the same
// state directory; then Prometheus comes back on the same TSDB. Once the
// queue has drained, every series has a sample for every scrape
// of the window, except the scrapes the collector could not do while it was
// restarting.
func TestRemoteWriteOutage(t *testing.T) {
	t.Parallel()
	r, c := startRemoteWrite(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, LIF: true, Seed: 13})
	ctx := context.Background()

	var qp string
	eventually(t, waitTimeout, "data in Prometheus", func() []string {
		v, err := r.prom.Vector(ctx, `ernic_qp_bytes_sent_total{ernic_id="3"}`, time.Now())
		if err != nil || len(v) == 0 {
			return []string{fmt.Sprintf("no QP series of instance 3 yet (%v)", err)}
		}
		qp = string(v[0].Metric["qp"])
		return nil
	})
	time.Sleep(6 * rwInterval)

	// The outage: 65s without Prometheus, the collector killed after 25s.
	const outage = 65 * time.Second
	down := time.Now()
	r.prom.Stop()
	time.Sleep(25 * time.Second)
	if err := c.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.Exited()
	killed := time.Now()
	r.startCollector()
	restarted := time.Now()
	time.Sleep(time.Until(down.Add(outage)))
	// The queue on disk holds the outage's scrapes.
	var walBytes int64
	walFiles, _ := filepath.Glob(filepath.Join(r.stateDir, "queue", "*"))
	for _, f := range walFiles {
		if fi, err := os.Stat(f); err == nil {
			walBytes += fi.Size()
		}
	}
	r.prom.Start()
	up := time.Now()
	t.Logf("Prometheus down %v; collector killed %v into the outage, started again %v later; queue at the end of the outage: %d files, %d bytes",
		up.Sub(down).Round(time.Millisecond), killed.Sub(down).Round(time.Millisecond), restarted.Sub(killed).Round(time.Millisecond), len(walFiles), walBytes)
	if walBytes == 0 {
		t.Errorf("the queue in %s is empty at the end of the outage", r.stateDir)
	}

	// Drained: the newest sample is recent again.
	eventually(t, 60*time.Second, "the backlog in Prometheus", func() []string {
		v, err := r.prom.Vector(ctx, `timestamp(ernic_stats_writes_total{ernic_id="2"})`, time.Now())
		if err != nil || len(v) != 1 {
			return []string{fmt.Sprintf("%v %v", v, err)}
		}
		if age := time.Since(time.Unix(int64(v[0].Value), 0)); age > 3*time.Second {
			return []string{fmt.Sprintf("newest sample %v old", age)}
		}
		return nil
	})
	drained := time.Now()
	t.Logf("backlog drained %v after Prometheus came back", drained.Sub(up).Round(time.Millisecond))
	time.Sleep(3 * rwInterval)

	// The window: from 5s before the outage (the collector had sent for at
	// least 6s then) to 2s before the drain was seen.
	end := drained.Add(-2 * time.Second).Truncate(time.Second)
	window := end.Sub(down.Add(-5 * time.Second).Truncate(time.Second))
	ws := fmt.Sprintf("%ds", int(window.Seconds()))
	expected := int(window / rwInterval)
	series := []string{
		`ernic_stats_writes_total{ernic_id="2"}`,
		fmt.Sprintf(`ernic_qp_bytes_sent_total{ernic_id="3",qp=%q}`, qp),
		`ernic_lif_counter_total{ernic_id="2",counter="rx_ucast_bytes"}`,
		`ernic_instance_up{ernic_id="1"}`,
		`ernic_instances`,
	}
	for _, sel := range series {
		n, err := r.prom.ScalarAt(ctx, fmt.Sprintf("count_over_time(%s[%s])", sel, ws), end)
		if err != nil {
			t.Errorf("%s: %v", sel, err)
			continue
		}
		m, err := r.prom.RawSamples(ctx, sel, window, end)
		if err != nil {
			t.Fatal(err)
		}
		raw := rawOf(t, m, sel)
		var atKill, elsewhere int
		var holes []string
		for _, g := range gaps(raw, rwInterval) {
			holes = append(holes, fmt.Sprintf("%s..%s (%d missing)", g.from.Format("15:04:05.000"), g.to.Format("15:04:05.000"), g.missing))
			// The restart's hole: from the last scrape before the kill to
			// the first of the new process (initial_delay 1s).
			if !g.from.After(killed) && g.from.After(killed.Add(-2*rwInterval)) && g.to.Before(restarted.Add(4*rwInterval)) {
				atKill += g.missing
			} else {
				elsewhere += g.missing
			}
		}
		var aroundKill []string
		for _, sp := range raw {
			if at := sp.Timestamp.Time(); at.After(killed.Add(-3*rwInterval)) && at.Before(restarted.Add(4*rwInterval)) {
				aroundKill = append(aroundKill, at.Format("15:04:05.000"))
			}
		}
		t.Logf("%s over %s: expected %d samples (window / %v), received %d (count_over_time %v); missing at the kill and restart %d, elsewhere %d; holes: %v; samples around the kill at %s: %v",
			sel, ws, expected, rwInterval, len(raw), n, atKill, elsewhere, holes, killed.Format("15:04:05.000"), aroundKill)
		if int(n) != len(raw) {
			t.Errorf("%s: count_over_time %v but %d raw samples", sel, n, len(raw))
		}
		// The restart costs the scrapes of the collector's start-up (about
		// 0.5s) and the receiver's initial_delay (1s): at most 4. Nothing
		// else may be lost: 1 sample of slack at the edges of the window.
		if atKill > 4 {
			t.Errorf("%s: %d samples missing at the kill and restart, want at most 4", sel, atKill)
		}
		if elsewhere > 0 || len(raw)+atKill < expected-1 {
			t.Errorf("%s: %d samples received + %d lost at the restart, expected %d (±1): %d lost during the outage",
				sel, len(raw), atKill, expected, expected-len(raw)-atKill)
		}
	}
}

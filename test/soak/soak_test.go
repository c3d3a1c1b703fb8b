// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

// Package soak runs otelcol-ernic, as shipped with
// config/prometheus-remote-write.yaml, against the chaos simulator
// (internal/sim/README.md) and a real Prometheus for SOAK_DURATION (default
// 90s; `make soak` runs 1h), then checks what Prometheus stored against what
// the simulator wrote, and how the collector behaved: what fails it is in
// docs/development.md, Soak test.
//
// The summary is logged and written, with the simulator's and collector's
// logs, to SOAK_DIR/<time>/ when SOAK_DIR is set (else a test directory).
//
// Environment: SOAK_DURATION, SOAK_DIR, SOAK_MAX_RSS_MIB (default 384: the
// memory_limiter's 256 and the runtime), SOAK_CHAOS_EVERY (default 3s),
// SOAK_HUGE_QPS (default 10000), SOAK_SEED (default 1), SOAK_KINDS
// (comma-separated chaos kinds, default all), OTELCOL_BIN, PROMETHEUS_BIN.
package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// faultInterval is the receiver's (receiver/ernicreceiver/faults.go): a
// fault key is logged at most once per interval.
const faultInterval = 10 * time.Minute

// maxFileBytes is the soak's max_file_bytes: above the 10 000-QP file (about
// 3.5 MiB), below the oversized fault's file.
const maxFileBytes = 8 << 20

// soakInstances is the simulator's instance count at the start (the
// manager and four workers); soakMaxInstances the collector's
// max_instances: these and the huge instance are published, every
// instance manifest-grow adds is over the cap.
const (
	soakInstances    = 5
	soakMaxInstances = 6
)

const override = `receivers:
  ernic:
    collection_interval: 1s
    max_file_bytes: %d
    max_instances: %d
    metrics:
      ernic.qp.wqes.by_opcode:
        enabled: true
exporters:
  remote_write:
    merge_window: 200ms
service:
  telemetry:
    logs:
      encoding: json
      output_paths: [stdout]
      error_output_paths: [stdout]
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
`

// envOr returns the environment variable name as parse reads it, or def
// when it is unset; a value parse refuses fails the test.
func envOr[T any](t *testing.T, name string, def T, parse func(string) (T, error)) T {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return x
}

// soakConfig is the soak's configuration from the environment (the
// package comment lists the variables).
type soakConfig struct {
	duration, every   time.Duration
	rssBound, hugeQPs int
	seed              int64
	kinds             []string // SOAK_KINDS; nil: all
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	return soakConfig{
		duration: envOr(t, "SOAK_DURATION", 90*time.Second, time.ParseDuration),
		every:    envOr(t, "SOAK_CHAOS_EVERY", 3*time.Second, time.ParseDuration),
		rssBound: envOr(t, "SOAK_MAX_RSS_MIB", 384, strconv.Atoi),
		hugeQPs:  envOr(t, "SOAK_HUGE_QPS", 10000, strconv.Atoi),
		seed:     int64(envOr(t, "SOAK_SEED", 1, strconv.Atoi)),
		kinds:    envOr(t, "SOAK_KINDS", nil, func(v string) ([]string, error) { return strings.Split(v, ","), nil }),
	}
}

// ---------------------------------------------------------------------------
// The test.

// soakWorld is what the soak runs: a Prometheus with the remote-write
// receiver, the simulator with its chaos runner, and the collector under
// test with its resource monitor. Its artefacts go to dir.
type soakWorld struct {
	dir           string
	prom          *harness.Prometheus
	chaos         *sim.Chaos
	chaosLogPath  string
	col           *harness.Process
	mon           *monitor
	monStop       context.CancelFunc
	telemetryPort int
	start         time.Time // when the collector started
}

// startSoakWorld starts the world; it is stopped when the test ends, and
// the logs of the collector and the simulator written into its dir.
func startSoakWorld(t *testing.T, ctx context.Context, cfg soakConfig) *soakWorld {
	t.Helper()
	bin := harness.CollectorBinary(t)
	w := &soakWorld{dir: t.TempDir()}
	if d := os.Getenv("SOAK_DIR"); d != "" {
		w.dir = filepath.Join(d, time.Now().Format("20060102-150405"))
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runDir := filepath.Join(w.dir, "run")
	w.prom = harness.StartRemoteWritePrometheus(t, w.dir, "2d")

	// The simulator, logging every complete write from its first one.
	w.chaosLogPath = filepath.Join(w.dir, "chaos.jsonl")
	chaosLog, err := os.Create(w.chaosLogPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chaosLog.Close() })
	simText := &harness.LockedBuffer{}
	s, err := sim.New(sim.Options{RunDir: runDir, Instances: soakInstances, QPs: 8, Interval: time.Second, LIF: true, Seed: cfg.seed, Log: simText})
	if err != nil {
		t.Fatal(err)
	}
	w.chaos, err = sim.NewChaos(s, sim.ChaosOptions{
		Events: chaosLog, Every: cfg.every, TornEvery: time.Second,
		HoldMin: 2 * time.Second, HoldMax: 4 * time.Second, RestartGap: 10 * time.Second,
		MaxFileBytes: maxFileBytes, HugeQPs: cfg.hugeQPs, Seed: cfg.seed,
		MaxInstances: soakMaxInstances, Kinds: cfg.kinds,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.chaos.Stop(); _ = s.Stop() })

	// The collector: the shipped remote-write config plus the soak's
	// overrides, goroutines traced every 10s on stderr.
	w.telemetryPort = harness.FreePort(t)
	overridePath := filepath.Join(w.dir, "soak.yaml")
	if err := os.WriteFile(overridePath, []byte(fmt.Sprintf(override, maxFileBytes, soakMaxInstances, w.telemetryPort)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.start = time.Now()
	// stdout: the JSON log; stderr: the runtime's scheduler traces.
	w.col = harness.Start(t, harness.Launch{
		Name: "collector", Path: bin,
		Args: harness.ConfigArgs(filepath.Join(harness.RepoRoot(t), "config", "prometheus-remote-write.yaml"), overridePath),
		Env: []string{
			"ERNIC_RUN_DIR=" + runDir,
			"ERNIC_REMOTE_WRITE_URL=" + w.prom.WriteURL(),
			"ERNIC_STATE_DIR=" + filepath.Join(w.dir, "state"),
			"GODEBUG=schedtrace=10000,scheddetail=1",
		},
		DropEnv: []string{"GODEBUG="},
		Stderr:  &harness.LockedBuffer{},
	})
	t.Cleanup(func() {
		w.col.Stop(15 * time.Second)
		_ = os.WriteFile(filepath.Join(w.dir, "collector.log"), []byte(w.col.Log.String()), 0o644)
		_ = os.WriteFile(filepath.Join(w.dir, "collector-sched.log"), []byte(w.col.Stderr.String()), 0o644)
		_ = os.WriteFile(filepath.Join(w.dir, "sim.log"), []byte(simText.String()), 0o644)
	})
	w.mon = &monitor{}
	var monCtx context.Context
	monCtx, w.monStop = context.WithCancel(ctx)
	t.Cleanup(w.monStop)
	go w.mon.run(monCtx, w.col.Pid(), w.telemetryPort)
	return w
}

// waitForData waits until a worker's write count is in Prometheus.
func (w *soakWorld) waitForData(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		v, _, err := w.prom.Query(ctx, `ernic_stats_writes_total{ernic_id="2"}`, time.Now())
		if err == nil && len(v) == 1 {
			return
		}
		if !w.col.Running() || time.Now().After(deadline) {
			t.Fatalf("no data in Prometheus within 60s (collector running: %v, last error %v):\n%s", w.col.Running(), err, harness.Tail(w.col.Log.String(), 4000))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// runChaos injects faults for d, then gives the collector 8 s to see the
// recovered processes and send its queue. It returns the end of the
// soak's window and whether the collector exited.
func (w *soakWorld) runChaos(t *testing.T, ctx context.Context, d time.Duration) (end time.Time, exited bool) {
	t.Helper()
	if err := w.chaos.Start(ctx); err != nil {
		t.Fatal(err)
	}
	chaosEnd := time.Now().Add(d)
	for time.Now().Before(chaosEnd) && w.col.Running() {
		time.Sleep(time.Second)
	}
	if err := w.chaos.Stop(); err != nil {
		t.Fatal(err)
	}
	// The recovered processes are seen, and the queue sent.
	for i := 0; i < 8 && w.col.Running(); i++ {
		time.Sleep(time.Second)
	}
	end = time.Now()
	exited = !w.col.Running()
	w.monStop()
	return end, exited
}

// TestSoak runs the collector against the chaos simulator and a real
// Prometheus for SOAK_DURATION, then checks (as subtests) the resets of
// every counter series, the raw samples of the sampled series, the
// collector's resources and its log, and that it stops cleanly; the
// summary goes to summary.json in the soak's directory.
func TestSoak(t *testing.T) {
	cfg := soakConfigFromEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // after the world's cleanups: they stop it first
	w := startSoakWorld(t, ctx, cfg)
	w.waitForData(t, ctx)

	t.Logf("soak: %v of chaos, artefacts in %s", cfg.duration, w.dir)
	end, exited := w.runChaos(t, ctx, cfg.duration)
	losses := telemetryLosses(ctx, w.telemetryPort)

	sum := &summary{Duration: cfg.duration.String(), RSSBoundMiB: cfg.rssBound, Losses: losses}
	sum.CollectorExited = exited
	if exited {
		t.Errorf("the collector exited during the soak (%v):\n%s", w.col.Err(), harness.Tail(w.col.Log.String(), 8000))
	}
	counts := w.chaos.Counts()
	run := readChaosLog(t, w.chaosLogPath)
	sum.Instances = run.ids
	sum.FaultsInjected = run.faults
	sum.Skipped = run.skipped
	sum.RealRestarts = run.restarts
	sum.RestartCauses = run.causes
	sum.CompleteWrites = run.writes
	kinds := cfg.kinds
	if kinds == nil {
		kinds = sim.ChaosKinds
	}
	kinds = append(slices.Clone(kinds), sim.ChaosTornKinds...)
	for _, k := range kinds {
		if k != sim.ChaosRestart && run.faults[k] == 0 && run.skipped[k] == "" {
			sum.NotInjected = append(sum.NotInjected, k)
		}
	}
	if counts.Writes == 0 || len(run.writes) == 0 {
		t.Fatal("the simulator logged no complete write")
	}
	if cfg.duration >= time.Minute && len(sum.NotInjected) > 0 {
		t.Errorf("fault kinds never injected in %v: %v", cfg.duration, sum.NotInjected)
	}

	window := end.Sub(w.start).Truncate(time.Second) + 2*time.Second
	sum.Window = window.String()
	c := &soakCheck{cfg: cfg, w: w, run: run, sum: sum, end: end, window: window,
		rng: fmt.Sprintf("%ds", int(window.Seconds()))}
	t.Run("resets", func(t *testing.T) { c.resets(t, ctx) })
	t.Run("raw_samples", func(t *testing.T) { c.rawSamples(t, ctx) })
	t.Run("resources", c.resources)
	t.Run("collector_log", c.collectorLog)
	t.Run("pid_reuse_up", func(t *testing.T) { c.pidReuseUp(t, ctx) })
	t.Run("invalid_utf8", func(t *testing.T) { c.invalidUTF8(t, ctx) })
	t.Run("future_mtime", func(t *testing.T) { c.futureMtime(t, ctx) })
	t.Run("max_instances", func(t *testing.T) { c.maxInstances(t, ctx) })

	// The collector stops cleanly.
	if w.col.Stop(15 * time.Second) {
		t.Errorf("the collector did not stop within 15s of SIGTERM")
	} else if w.col.Err() != nil && !exited {
		t.Errorf("the collector exited with %v after SIGTERM", w.col.Err())
	}

	b, _ := json.MarshalIndent(sum, "", "  ")
	_ = os.WriteFile(filepath.Join(w.dir, "summary.json"), b, 0o644)
	t.Logf("soak summary (%s):\n%s", filepath.Join(w.dir, "summary.json"), b)
	for k, d := range run.details {
		t.Logf("fault %s, e.g. %s", k, strings.Join(d, " | "))
	}
}

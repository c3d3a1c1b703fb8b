// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// componentHealth is one node of the healthcheckv2 extension's verbose
// status: the collector, a pipeline or a component.
type componentHealth struct {
	Healthy    bool                       `json:"healthy"`
	Status     string                     `json:"status"`
	Error      string                     `json:"error"`
	Components map[string]componentHealth `json:"components"`
}

// health is an answer of GET /status?verbose.
type health struct {
	componentHealth
	code int
	body string
}

// receiver is the ernic receiver's node in the metrics pipeline.
func (h health) receiver() componentHealth {
	return h.Components["pipeline:metrics"].Components["receiver:ernic"]
}

// getHealth asks the health check of config/local.yaml on port.
func getHealth(port int) (health, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/status?verbose", port), nil)
	if err != nil {
		return health{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return health{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return health{}, err
	}
	h := health{code: resp.StatusCode, body: string(b)}
	if err := json.Unmarshal(b, &h.componentHealth); err != nil {
		return h, fmt.Errorf("%d %q: %w", resp.StatusCode, b, err)
	}
	return h, nil
}

// healthWatch polls the health check and ernic_run_dir_readable of one
// collector.
type healthWatch struct {
	t                    *testing.T
	c                    *harness.Process
	promPort, healthPort int
}

// until polls until cond holds for an answer of the health check and the
// value of ernic_run_dir_readable (-1 when absent) of the same moment, and
// returns that answer; it fails the test after waitTimeout.
func (w healthWatch) until(what string, cond func(h health, readable float64) bool) health {
	w.t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", w.promPort)
	deadline := time.Now().Add(waitTimeout)
	var last string
	for {
		select {
		case <-w.c.Exited():
			w.t.Fatalf("%s: collector exited: %v", what, w.c.Err())
		default:
		}
		h, err := getHealth(w.healthPort)
		readable := -1.0
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		mfs, serr := harness.Scrape(ctx, url)
		cancel()
		if serr == nil {
			if v, ok := value(mfs, "ernic_run_dir_readable"); ok {
				readable = v
			}
		}
		if err == nil && serr == nil && cond(h, readable) {
			return h
		}
		last = fmt.Sprintf("health %d %s (%v), ernic_run_dir_readable %v (%v)", h.code, h.body, err, readable, serr)
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: not within %s; last: %s", what, waitTimeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unhealthyAfter returns an override file that shortens the receiver's
// unhealthy_after to d.
func unhealthyAfter(t *testing.T, d time.Duration) string {
	return harness.WriteFile(t, "unhealthy.yaml", fmt.Sprintf("receivers:\n  ernic:\n    unhealthy_after: %s\n", d))
}

// A run directory absent for longer than unhealthy_after (rocm-ernic not
// started, or ERNIC_RUN_DIR mistyped) makes the health check answer 500
// with the receiver's error, while ernic_run_dir_readable says 0; once a
// simulator creates it, both say so (200, 1).
func TestHealthRunDirAbsentThenCreated(t *testing.T) {
	harness.CollectorBinary(t)
	runDir := filepath.Join(t.TempDir(), "rocm-ernic")
	promPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	const after = 8 * time.Second
	started := time.Now()
	c := startCollector(t, runDir, promPort, healthPort, unhealthyAfter(t, after))
	w := healthWatch{t: t, c: c, promPort: promPort, healthPort: healthPort}

	// Within unhealthy_after: healthy, the gauge already 0.
	h := w.until("ernic_run_dir_readable 0", func(_ health, readable float64) bool { return readable == 0 })
	if time.Since(started) < after {
		if h.code != http.StatusOK || h.receiver().Status != "StatusOK" {
			t.Errorf("%s after start, under unhealthy_after %s: health %d, receiver %s, want 200 StatusOK\n%s", time.Since(started).Round(time.Millisecond), after, h.code, h.receiver().Status, h.body)
		}
	} else {
		t.Logf("first ernic_run_dir_readable seen %s after start, past unhealthy_after: the healthy phase is not checked", time.Since(started))
	}

	h = w.until("health 500 with the receiver's error", func(h health, _ float64) bool { return h.code == http.StatusInternalServerError })
	if time.Since(started) < after {
		t.Errorf("unhealthy %s after start, before unhealthy_after %s", time.Since(started), after)
	}
	r := h.receiver()
	if h.Healthy || r.Healthy || r.Status != "StatusRecoverableError" || !strings.Contains(r.Error, runDir+": Run directory absent") {
		t.Errorf("health: collector healthy %v, receiver %+v; want both unhealthy, StatusRecoverableError naming %s\n%s", h.Healthy, r, runDir, h.body)
	}
	w.until("ernic_run_dir_readable still 0", func(_ health, readable float64) bool { return readable == 0 })

	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 2, QPs: 2, Interval: 200 * time.Millisecond, Seed: 3})
	h = w.until("health 200 and ernic_run_dir_readable 1", func(h health, readable float64) bool {
		return h.code == http.StatusOK && readable == 1
	})
	if r := h.receiver(); !h.Healthy || r.Status != "StatusOK" || r.Error != "" {
		t.Errorf("health after the run directory came: collector healthy %v, receiver %+v; want StatusOK\n%s", h.Healthy, r, h.body)
	}
}

// ERNIC_RUN_DIR naming a file (a typo): the log says so as the collector
// starts, and the health check and ernic_run_dir_readable report it.
func TestHealthRunDirIsAFile(t *testing.T) {
	harness.CollectorBinary(t)
	runDir := filepath.Join(t.TempDir(), "rocm-ernic.conf")
	if err := os.WriteFile(runDir, []byte("not a run directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	promPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	log := &harness.LockedBuffer{}
	override := harness.WriteFile(t, "ports.yaml", fmt.Sprintf("exporters:\n  prometheus_text:\n    endpoint: 127.0.0.1:%d\nextensions:\n  healthcheckv2:\n    http:\n      endpoint: 127.0.0.1:%d\n", promPort, healthPort))
	c := harness.StartCollector(t, harness.ConfigArgs(filepath.Join(harness.RepoRoot(t), "config", "local.yaml"), override, unhealthyAfter(t, 2*time.Second)),
		[]string{"ERNIC_RUN_DIR=" + runDir}, log, true)
	w := healthWatch{t: t, c: c, promPort: promPort, healthPort: healthPort}

	h := w.until("health 500 and ernic_run_dir_readable 0", func(h health, readable float64) bool {
		return h.code == http.StatusInternalServerError && readable == 0
	})
	if r := h.receiver(); r.Status != "StatusRecoverableError" || !strings.Contains(r.Error, "not a directory") || !strings.Contains(r.Error, runDir) {
		t.Errorf("receiver %+v; want StatusRecoverableError: %s not a directory\n%s", r, runDir, h.body)
	}
	var said int
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "Run directory is not a directory") && strings.Contains(line, runDir) {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the collector's log says %d times that run_dir is not a directory, want once as it starts:\n%s", said, harness.Tail(log.String(), 40))
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The OTLP delivery tests run config/otlphttp.yaml as shipped (protobuf,
// gzip, the persistent queue on file_storage) against an OTLP/HTTP endpoint
// of the test whose answer the test sets: accept, refuse the content
// (400), or fail (503).

// otlpEndpoint is an OTLP/HTTP metrics endpoint: it answers with status and
// records, per accepted request, when it came and the newest point time of
// ernic.instances in it.
type otlpEndpoint struct {
	mu       sync.Mutex
	status   int
	accepted []time.Time // the newest ernic.instances point of each accepted request
	url      string
}

func startOTLPEndpoint(t *testing.T) *otlpEndpoint {
	t.Helper()
	e := &otlpEndpoint{status: http.StatusOK}
	e.url = harness.ServeHTTP(t, otlpHandler(false, func(w http.ResponseWriter, req pmetricotlp.ExportRequest) {
		e.mu.Lock()
		status := e.status
		if status == http.StatusOK {
			e.accepted = append(e.accepted, newestInstancesPoint(req))
		}
		e.mu.Unlock()
		if status != http.StatusOK {
			http.Error(w, "test says no", status)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	return e
}

func newestInstancesPoint(req pmetricotlp.ExportRequest) time.Time {
	var newest time.Time
	rms := req.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				if ms.At(k).Name() != "ernic.instances" {
					continue
				}
				dps := ms.At(k).Gauge().DataPoints()
				for p := range dps.Len() {
					if ts := dps.At(p).Timestamp().AsTime(); ts.After(newest) {
						newest = ts
					}
				}
			}
		}
	}
	return newest
}

func (e *otlpEndpoint) set(status int) {
	e.mu.Lock()
	e.status = status
	e.mu.Unlock()
}

// pointsSince returns the ernic.instances point times accepted after t.
func (e *otlpEndpoint) pointsSince(t time.Time) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []time.Time
	for _, at := range e.accepted {
		if at.After(t) {
			out = append(out, at)
		}
	}
	return out
}

// startOTLPCollector runs config/otlphttp.yaml on a 2x2 simulator with a
// 1 s scrape, sending to e, with state in stateDir and the extra env.
func startOTLPCollector(t *testing.T, e *otlpEndpoint, stateDir string, env ...string) *harness.LockedBuffer {
	t.Helper()
	runDir := t.TempDir()
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 41})
	override := fastQueueOverride(t, "otlp_http_durable", 100*time.Millisecond, "")
	log := &harness.LockedBuffer{}
	runCollectorLog(t, append([]string{
		"ERNIC_RUN_DIR=" + runDir,
		"ERNIC_OTLP_ENDPOINT=" + e.url,
		"ERNIC_STATE_DIR=" + stateDir,
	}, env...), log, filepath.Join(harness.RepoRoot(t), "config", "otlphttp.yaml"), override)
	return log
}

// waitDelivery waits until a point newer than after arrives.
func waitDelivery(t *testing.T, e *otlpEndpoint, after time.Time, timeout time.Duration, what string) {
	t.Helper()
	eventually(t, timeout, what, func() []string {
		if len(e.pointsSince(after)) == 0 {
			return []string{"no point after " + after.Format("15:04:05.000")}
		}
		return nil
	})
}

// TestOTLPRejectedAndBound: the endpoint refuses the content for 3 s (400):
// those batches are dropped and delivery goes on. Then it fails (503) for
// longer than the queue's bound (ERNIC_BUFFER_MAX_BYTES, small) holds:
// the queue stays within its bound, the oldest batches are dropped to make
// room for the newest, and what is kept, the outage's end, is delivered
// when the endpoint is back.
func TestOTLPRejectedAndBound(t *testing.T) {
	t.Parallel()
	e := startOTLPEndpoint(t)
	state := t.TempDir()
	const bound = 60000
	log := startOTLPCollector(t, e, state, fmt.Sprintf("ERNIC_BUFFER_MAX_BYTES=%d", bound))
	waitDelivery(t, e, time.Time{}, waitTimeout, "first delivery")

	e.set(http.StatusBadRequest)
	time.Sleep(3 * time.Second)
	e.set(http.StatusOK)
	back := time.Now()
	waitDelivery(t, e, back, 10*time.Second, "delivery after the rejected batches")
	if !strings.Contains(log.String(), "Dropping data") {
		t.Errorf("the rejected batches were not reported as dropped")
	}

	e.set(http.StatusServiceUnavailable)
	down := time.Now()
	eventually(t, 60*time.Second, "a full queue", func() []string {
		if !strings.Contains(log.String(), "dropped the oldest batch: queue full") {
			return []string{"no \"dropped the oldest batch: queue full\" in the collector's log"}
		}
		return nil
	})
	full := time.Now()
	// As long again as the queue took to fill: what it holds at the end
	// is the outage's second half.
	time.Sleep(max(full.Sub(down), 15*time.Second))
	queue := dirBytes(t, filepath.Join(state, "queue"))
	e.set(http.StatusOK)
	up := time.Now()
	waitDelivery(t, e, up, 30*time.Second, "delivery after the outage")
	time.Sleep(3 * time.Second)
	var early, late int
	for _, at := range e.pointsSince(down) {
		switch {
		case at.After(down.Add(2*time.Second)) && at.Before(down.Add(full.Sub(down)/2)):
			early++
		case at.After(up.Add(-4*time.Second)) && at.Before(up):
			late++
		}
	}
	t.Logf("queue full %v after the outage began (bound %d bytes, queue directory %d bytes), outage %v; points of its first half delivered: %d, of its last 4 s: %d",
		full.Sub(down).Round(time.Second), bound, queue, up.Sub(down).Round(time.Second), early, late)
	if queue > 4*bound+(1<<20) {
		t.Errorf("queue directory %d bytes for a bound of %d", queue, bound)
	}
	if late == 0 {
		t.Errorf("the newest batches of the outage were not delivered after it: the newest must be kept")
	}
	if early > 0 {
		t.Errorf("%d points of the outage's first half were delivered: the oldest must be dropped for the newest", early)
	}
	if strings.Contains(log.String(), "sending queue is full") {
		t.Errorf("the queue refused a new batch; the oldest should have been dropped instead")
	}
}

// TestOTLPFullDisk: the state directory is a small tmpfs that fills while
// the endpoint fails. The collector keeps running and delivers again once
// space and the endpoint are back.
func TestOTLPFullDisk(t *testing.T) {
	harness.RequireRoot(t, "mount a 128 KiB tmpfs as the state directory")
	t.Parallel()
	e := startOTLPEndpoint(t)
	state := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", state).CombinedOutput(); err != nil {
		t.Fatalf("this test mounts a 128 KiB tmpfs as the state directory and needs root: mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", state).Run() })
	log := startOTLPCollector(t, e, state)
	waitDelivery(t, e, time.Time{}, waitTimeout, "first delivery")

	e.set(http.StatusServiceUnavailable)
	eventually(t, 90*time.Second, "a full state directory", func() []string {
		if !strings.Contains(log.String(), "no space left on device") {
			return []string{"no \"no space left on device\" in the collector's log"}
		}
		return nil
	})
	if out, err := exec.Command("mount", "-o", "remount,size=64m", state).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	e.set(http.StatusOK)
	back := time.Now()
	waitDelivery(t, e, back, 30*time.Second, "delivery once space and the endpoint are back")
	t.Logf("delivering new points %v after space and the endpoint came back", time.Since(back).Round(time.Millisecond))
}

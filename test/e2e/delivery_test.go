// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The delivery tests replay the faults of remote write one by one against
// the shipped config/prometheus-remote-write.yaml, the built collector and a
// real Prometheus: a rejected request, an outage past the queue's bound, a
// full state directory, a damaged one.

// setEnv sets one variable of the collector's environment.
func (r *rwSetup) setEnv(name, value string) {
	for i, kv := range r.env {
		if strings.HasPrefix(kv, name+"=") {
			r.env[i] = name + "=" + value
			return
		}
	}
	r.env = append(r.env, name+"="+value)
}

// newestAge is how old the newest sample of sel is in Prometheus.
func (r *rwSetup) newestAge(ctx context.Context, sel string) (time.Duration, error) {
	return newestAge(ctx, r.prom, sel)
}

// newestAge is how old the newest sample of sel is in prom.
func newestAge(ctx context.Context, prom *harness.Prometheus, sel string) (time.Duration, error) {
	v, err := prom.Vector(ctx, "timestamp("+sel+")", time.Now())
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%d series for %s", len(v), sel)
	}
	return time.Since(time.Unix(int64(v[0].Value), 0)), nil
}

// waitFresh waits until the newest sample of sel is at most 3 scrapes old.
func (r *rwSetup) waitFresh(ctx context.Context, timeout time.Duration, sel, what string) {
	r.t.Helper()
	eventually(r.t, timeout, what, func() []string {
		age, err := r.newestAge(ctx, sel)
		if err != nil {
			return []string{err.Error()}
		}
		if age > 3*rwInterval {
			return []string{fmt.Sprintf("newest sample of %s is %v old", sel, age.Round(time.Millisecond))}
		}
		return nil
	})
}

// startThenOutage starts the collector, waits until sel is fresh in
// Prometheus, then stops Prometheus: an outage of the backend. It returns
// the collector and when the outage began.
func (r *rwSetup) startThenOutage(ctx context.Context, sel string) (*harness.Process, time.Time) {
	r.t.Helper()
	c := r.startCollector()
	r.waitFresh(ctx, waitTimeout, sel, "data in Prometheus")
	down := time.Now()
	r.prom.Stop()
	return c, down
}

// writeForeignSample writes one sample of name at `at` to Prometheus, as a
// second writer of the same series would: with this host's job and
// instance (docs/operations.md, Many hosts), the labels the collector's series have.
func writeForeignSample(t *testing.T, url, name string, at time.Time) {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	wr := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: name}, {Name: "instance", Value: host}, {Name: "job", Value: "ernic"}},
		Samples: []prompb.Sample{{Value: 99, Timestamp: at.UnixMilli()}},
	}}}
	raw, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(snappy.Encode(nil, raw)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("foreign write: %s", resp.Status)
	}
}

// TestRemoteWriteRejectedRequest: another writer puts a sample of
// ernic_instances 5s in the future into the same Prometheus, so Prometheus
// answers 400 (out of order) to every request of the collector for 5s
// (it rolls back the whole request). The collector drops those requests,
// says so once, and delivers everything after them: within a few seconds
// every scrape arrives again, and no rejected request is sent twice.
func TestRemoteWriteRejectedRequest(t *testing.T) {
	t.Parallel()
	r, c := startRemoteWrite(t, sim.Options{Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 21})
	ctx := context.Background()
	const sel = `ernic_stats_writes_total{ernic_id="2"}`
	r.waitFresh(ctx, waitTimeout, sel, "data in Prometheus")

	injected := time.Now()
	future := injected.Add(5 * time.Second)
	writeForeignSample(t, r.prom.WriteURL(), "ernic_instances", future)

	// Delivery goes on once the foreign sample is in the past.
	time.Sleep(time.Until(future))
	r.waitFresh(ctx, 10*time.Second, sel, "delivery after the rejected requests")
	resumed := time.Now()
	time.Sleep(8 * rwInterval)

	// Every scrape from 2s after the foreign sample's time on is there.
	from := future.Add(2 * time.Second).Truncate(time.Second)
	end := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	m, err := r.prom.RawSamples(ctx, sel, end.Sub(from), end)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawOf(t, m, sel)
	if want := int(end.Sub(from) / rwInterval); len(raw) < want-1 {
		t.Errorf("%s: %d samples from %s to %s, want %d (±1): delivery did not go on; gaps %v",
			sel, len(raw), from.Format("15:04:05"), end.Format("15:04:05"), want, gaps(raw, rwInterval))
	}
	log := c.Log.String()
	rejections := strings.Count(log, "rejected by the endpoint")
	promRejects := strings.Count(r.prom.Log.String(), "Out of order sample")
	t.Logf("foreign sample at +5s; delivery fresh again %v after the injection; %d samples after it; collector rejection lines %d; Prometheus out-of-order lines %d",
		resumed.Sub(injected).Round(time.Millisecond), len(raw), rejections, promRejects)
	if rejections != 1 {
		t.Errorf("want exactly one (rate-limited) rejection line in the collector's log, got %d", rejections)
	}
	if !strings.Contains(log, "out of order") {
		t.Errorf("the rejection line does not carry Prometheus' answer (out of order)")
	}
	// One rejected request per scrape in the 5s window (a 1s scrape): a
	// request sent again would add more.
	if promRejects < 3 || promRejects > 8 {
		t.Errorf("Prometheus logged %d out-of-order samples; want 3-8 (one per scrape of the 5s window, none sent twice)", promRejects)
	}
}

// TestRemoteWriteBufferBound: Prometheus is down longer than the queue's
// bound (ERNIC_BUFFER_MAX_BYTES, set small) holds. The oldest batches are
// dropped, the newest kept: after the outage Prometheus has the last
// scrapes before its return and not the first ones of the outage, and the
// collector said how much it dropped.
func TestRemoteWriteBufferBound(t *testing.T) {
	t.Parallel()
	r := newRemoteWrite(t, sim.Options{Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 22})
	const bound = 15000 // bytes of compressed requests: about 10 scrapes of this host
	r.setEnv("ERNIC_BUFFER_MAX_BYTES", fmt.Sprint(bound))
	ctx := context.Background()
	const sel = `ernic_stats_writes_total{ernic_id="2"}`
	c, down := r.startThenOutage(ctx, sel)
	time.Sleep(30 * time.Second)
	queueBytes := dirBytes(t, filepath.Join(r.stateDir, "queue"))
	rss := rssKiB(t, c.Pid())
	r.prom.Start()
	up := time.Now()
	r.waitFresh(ctx, 30*time.Second, sel, "delivery after the outage")
	time.Sleep(3 * rwInterval)

	m, err := r.prom.RawSamples(ctx, sel, time.Since(down)+2*time.Second, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw := rawOf(t, m, sel)
	var early, late int
	var offsets []string
	for _, sp := range raw {
		at := sp.Timestamp.Time()
		offsets = append(offsets, fmt.Sprintf("%+.1f", at.Sub(down).Seconds()))
		switch {
		case at.After(down.Add(2*time.Second)) && at.Before(down.Add(12*time.Second)):
			early++
		case at.After(up.Add(-6*time.Second)) && at.Before(up):
			late++
		}
	}
	log := c.Log.String()
	t.Logf("outage %v with a bound of %d bytes: queue directory %d bytes, RSS %d KiB at the end of it; samples of %s in the outage's first 10s: %d, in its last 6s: %d; samples at (s from the outage's start): %v",
		up.Sub(down).Round(time.Millisecond), bound, queueBytes, rss, sel, early, late, offsets)
	if late < 4 {
		t.Errorf("the newest scrapes of the outage are missing (%d of the last 6s): the newest must be kept", late)
	}
	if early > 0 {
		t.Errorf("%d samples of the outage's first 10s arrived: the bound (%d bytes) cannot hold 30 scrapes, the oldest must be dropped", early, bound)
	}
	// What is kept of the outage is its end, without a hole: the oldest
	// batches go first, and the pipeline never waits long enough to miss a
	// scrape.
	var kept []model.SamplePair
	for _, sp := range raw {
		if at := sp.Timestamp.Time(); at.After(down) && at.Before(up) {
			kept = append(kept, sp)
		}
	}
	if holes := gaps(kept, rwInterval); len(holes) > 0 {
		t.Errorf("holes in what was kept of the outage: %v", holes)
	}
	if len(kept) > 0 && up.Sub(kept[len(kept)-1].Timestamp.Time()) > 2*rwInterval {
		t.Errorf("the last sample kept of the outage is %v before its end: the newest must be kept", up.Sub(kept[len(kept)-1].Timestamp.Time()))
	}
	if !strings.Contains(log, "dropped the oldest batch: queue full") {
		t.Errorf("no line says that the oldest batches were dropped")
	}
	if strings.Contains(log, "Refusing data") || strings.Contains(log, "Rejecting data") {
		t.Errorf("data was refused during the outage")
	}
}

// TestRemoteWriteFullDisk: the state directory is a small tmpfs that fills
// during an outage. The collector reports it, keeps running, and delivers
// again by itself once space is back; a restart (kill -9) on the same
// directory starts and delivers; a damaged queue file is set aside and the
// collector starts all the same, on a fresh queue file, and says so.
func TestRemoteWriteFullDisk(t *testing.T) {
	harness.RequireRoot(t, "mount a 128 KiB tmpfs as the state directory")
	t.Parallel()
	r := newRemoteWrite(t, sim.Options{Instances: 3, QPs: 4, Interval: 500 * time.Millisecond, LIF: true, Seed: 23})
	state := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", state).CombinedOutput(); err != nil {
		t.Fatalf("this test mounts a 128 KiB tmpfs as the state directory and needs root: mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", state).Run() })
	r.stateDir = state
	r.setEnv("ERNIC_STATE_DIR", state)
	ctx := context.Background()
	const sel = `ernic_stats_writes_total{ernic_id="2"}`
	c, down := r.startThenOutage(ctx, sel)
	eventually(t, 60*time.Second, "a full state directory", func() []string {
		if !strings.Contains(c.Log.String(), "no space left on device") {
			return []string{"no \"no space left on device\" in the collector's log"}
		}
		return nil
	})
	full := time.Now()
	time.Sleep(3 * time.Second)
	if out, err := exec.Command("mount", "-o", "remount,size=64m", state).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	freed := time.Now()
	r.prom.Start()
	r.waitFresh(ctx, 30*time.Second, sel, "delivery once space is back")
	t.Logf("disk full %v after the outage began; space back %v later; delivering again %v after that",
		full.Sub(down).Round(time.Second), freed.Sub(full).Round(time.Second), time.Since(freed).Round(time.Millisecond))

	// A restart on the same directory.
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	c = r.startCollector()
	time.Sleep(3 * time.Second)
	r.waitFresh(ctx, 30*time.Second, sel, "delivery after a kill -9 and a restart")

	// A damaged queue file: the collector starts and delivers.
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(state, "queue", "*"))
	if len(files) == 0 {
		t.Fatalf("no queue file under %s", state)
	}
	for _, f := range files {
		if err := os.WriteFile(f, bytes.Repeat([]byte("not a bbolt file "), 1000), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c = r.startCollector()
	time.Sleep(3 * time.Second)
	select {
	case <-c.Exited():
		t.Fatalf("the collector exited on a damaged queue file: %v", c.Err())
	default:
	}
	r.waitFresh(ctx, 30*time.Second, sel, "delivery after a damaged queue file")
	if !strings.Contains(c.Log.String(), "a queue file cannot be read; set aside") {
		t.Errorf("the collector did not say that it set the damaged queue file aside")
	}
	if strings.Contains(c.Log.String(), "in-memory queue") {
		t.Errorf("the collector fell back to an in-memory queue on a damaged file")
	}
}

// dirBytes is the size of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// rssKiB is the resident set size of pid.
func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

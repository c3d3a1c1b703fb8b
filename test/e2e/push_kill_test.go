// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// pushPath is one push exporter with its shipped config and a real backend.
type pushPath struct {
	name     string
	config   string // in config/
	exporter string
	// extra is more of the exporter's override, indented under it.
	extra string
	// endpointEnv names the endpoint in the config's environment.
	endpointEnv string
	// backend starts the backend and returns it, the path the exporter
	// sends to under it, and the resource attributes it makes labels.
	backend func(t *testing.T) (p *harness.Prometheus, path string, promote []string)
	// relay: the exporter sends OTLP/gRPC to a second collector (the test
	// build) that sends OTLP/HTTP on; that collector is the one away.
	relay bool
}

// pushPaths are the three push exporters; remote write to Prometheus 3
// (2.0) and to Debian's 2.42 (1.0, no OTLP receiver there).
var pushPaths = []pushPath{
	{
		name: "otlp_http_durable to Prometheus 3", config: "otlphttp.yaml", exporter: "otlp_http_durable",
		endpointEnv: "ERNIC_OTLP_ENDPOINT", backend: prometheus3OTLP,
	},
	{
		name: "otlp_durable through a collector to Prometheus 3", config: "otlp.yaml", exporter: "otlp_durable",
		extra: "    tls:\n      insecure: true\n", endpointEnv: "ERNIC_OTLP_ENDPOINT", backend: prometheus3OTLP, relay: true,
	},
	{
		name: "remote_write 2.0 to Prometheus 3", config: "prometheus-remote-write.yaml", exporter: "remote_write",
		extra: "    protobuf_message: io.prometheus.write.v2.Request\n", endpointEnv: "ERNIC_REMOTE_WRITE_URL",
		backend: func(t *testing.T) (*harness.Prometheus, string, []string) {
			return startPrometheus3(t, startZeroFlag), "/api/v1/write", nil
		},
	},
	{
		name: "remote_write 1.0 to Prometheus 2.42", config: "prometheus-remote-write.yaml", exporter: "remote_write",
		endpointEnv: "ERNIC_REMOTE_WRITE_URL",
		backend: func(t *testing.T) (*harness.Prometheus, string, []string) {
			return harness.StartRemoteWritePrometheus(t, "", "1d"), "/api/v1/write", nil
		},
	},
}

// startZeroFlag makes Prometheus 3 write a 0 at each counter's start
// time: a start on a sample of its series would meet a value there.
const startZeroFlag = "--enable-feature=created-timestamp-zero-ingestion"

// prometheus3OTLP is Prometheus 3 as deploy/prometheus/otlp.yml configures it.
func prometheus3OTLP(t *testing.T) (*harness.Prometheus, string, []string) {
	conf, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "deploy", "prometheus", "otlp.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		OTLP struct {
			Promote []string `yaml:"promote_resource_attributes"`
		} `yaml:"otlp"`
	}
	if err := yaml.Unmarshal(conf, &c); err != nil {
		t.Fatal(err)
	}
	p := harness.StartPrometheus(t, harness.Prometheus3Binary(t), "", time.Minute, string(conf), "--web.enable-otlp-receiver", startZeroFlag)
	return p, "/api/v1/otlp", c.OTLP.Promote
}

// pushOutage is what killDuringOutage did, for the checks.
type pushOutage struct {
	// bound is ERNIC_BUFFER_MAX_BYTES: roomy holds the whole outage, tight
	// fills during it, so that the restarted collector meets a full queue.
	bound                          int
	rec                            *deliveryRecorder
	prom                           *harness.Prometheus
	logs                           []*harness.LockedBuffer
	started, down, killed, up, end time.Time
	// returning is when the backend was being started again: a request it
	// accepted came after it, even one noted before its start returned (up).
	returning time.Time
}

// TestPushKilledDuringOutage: each push exporter, with its shipped config
// and a 1 s scrape, loses its backend; an instance's server crashes (its
// pid stays in the manifest), the collector is killed (SIGKILL) and started
// again on the same queue, the backend comes back, then the server. No
// request is refused for a duplicate or out-of-order sample, and no series
// ever gets two values at one timestamp or a counter start at or after its
// point: neither in what reached the backend nor in what the backend
// holds. With a queue that holds the outage, the killed collector's
// backlog arrives whole; with one that fills during it, the restarted
// collector drops the oldest and its newest scrapes arrive.
func TestPushKilledDuringOutage(t *testing.T) {
	t.Parallel()
	for _, path := range pushPaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			roomy := killDuringOutage(t, path, 400_000)
			checkSeriesConsistent(t, roomy)
			checkBacklogArrived(t, roomy)
			tight := killDuringOutage(t, path, 20_000)
			checkSeriesConsistent(t, tight)
			checkNewestKept(t, tight)
		})
	}
}

// killDuringOutage runs the outage on path and waits until the backend
// took what the restarted collector saw: the crash and the new server.
func killDuringOutage(t *testing.T, path pushPath, bound int) *pushOutage {
	prom, under, promote := path.backend(t)
	o := &pushOutage{prom: prom, started: time.Now(), bound: bound}
	o.rec = startDeliveryRecorder(t, prom.URL(""), promote...)
	endpoint := o.rec.url + under
	away, back := prom.Stop, prom.Start
	if path.relay {
		endpoint, away, back = startRelay(t, o, o.rec.url+under+"/v1/metrics")
	}
	runDir, state := t.TempDir(), t.TempDir()
	s := harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, LIF: true, Seed: 52})
	override := harness.WriteFile(t, path.exporter+"-kill.yaml", fmt.Sprintf(`receivers:
  ernic:
    collection_interval: 1s
exporters:
  %s:
    merge_window: 200ms
    retry_on_failure:
      max_interval: 1s
%s`, path.exporter, path.extra))
	env := []string{"ERNIC_RUN_DIR=" + runDir, "ERNIC_STATE_DIR=" + state, "ERNIC_BUFFER_MAX_BYTES=" + strconv.Itoa(bound), path.endpointEnv + "=" + endpoint}
	config := filepath.Join(harness.RepoRoot(t), "config", path.config)
	log := &harness.LockedBuffer{}
	o.logs = append(o.logs, log)
	first := runCollectorLog(t, env, log, config, override)
	eventually(t, waitTimeout, "first delivery", func() []string {
		if !o.rec.acceptedAfter(o.started) {
			return []string{"nothing accepted yet"}
		}
		return nil
	})

	time.Sleep(2 * time.Second)
	away()
	o.down = time.Now()
	time.Sleep(2 * time.Second)
	must(t, s.Kill(2)) // a crash: the pid stays in the manifest, the file stays
	time.Sleep(2 * time.Second)
	must(t, first.Kill())
	o.killed = time.Now()
	runCollectorLog(t, env, log, config, override)
	time.Sleep(5 * time.Second)
	o.returning = time.Now()
	back()
	o.up = time.Now()
	eventually(t, time.Minute, "delivery after the outage, instance 2 down", func() []string {
		var missing []string
		if !o.rec.acceptedAfter(o.up.Add(2 * time.Second)) {
			missing = append(missing, "nothing from 2 s after the backend came back accepted yet")
		}
		if !o.rec.acceptedValue("ernic_instance_up", "2", 0, o.killed) {
			missing = append(missing, "no ernic_instance_up 0 of instance 2 from the restarted collector accepted yet")
		}
		return missing
	})
	must(t, s.Restart(2))
	restarted := time.Now()
	eventually(t, 30*time.Second, "instance 2 up again", func() []string {
		if !o.rec.acceptedValue("ernic_instance_up", "2", 1, restarted) {
			return []string{"no ernic_instance_up 1 of instance 2 since its restart accepted yet"}
		}
		return nil
	})
	o.end = time.Now()
	return o
}

// startRelay starts a second collector that takes OTLP/gRPC and sends
// OTLP/HTTP to url in order; it returns its endpoint and how to stop and
// start it again on the same port.
func startRelay(t *testing.T, o *pushOutage, url string) (endpoint string, away, back func()) {
	port := harness.FreePort(t)
	// One sender: Prometheus refuses samples older than its out-of-order window.
	conf := secondCollectorConfig(t, "relay.yaml", port, "    metrics_endpoint: "+url+"\n    compression: gzip\n    sending_queue:\n      num_consumers: 1\n")
	log := &harness.LockedBuffer{}
	o.logs = append(o.logs, log)
	start := func() *harness.Process {
		return harness.StartTestBuildCollector(t, harness.ConfigArgs(conf), nil, log, false)
	}
	relay := start()
	return fmt.Sprintf("127.0.0.1:%d", port), func() { relay.Stop(15 * time.Second) }, func() { relay = start() }
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// refusalWords are what Prometheus says of a sample it will not store.
var refusalWords = []string{"duplicate sample", "out of order", "too old", "out of bounds"}

// checkSeriesConsistent: no refused request, no refusal in the collectors'
// logs, no series with two values at one timestamp or a bad counter start,
// sent or stored; and the outage did what it is for.
func checkSeriesConsistent(t *testing.T, o *pushOutage) {
	reqs := o.rec.requests()
	for _, q := range reqs {
		if q.status/100 == 4 {
			var first []string
			for _, s := range q.samples[:min(len(q.samples), 4)] {
				first = append(first, fmt.Sprintf("%s at %s", s.series, msTime(s.ts)))
			}
			t.Errorf("the backend refused a request of %d samples at %s: %d %s; %s", len(q.samples), q.at.Format("15:04:05.000"), q.status, strings.TrimSpace(q.answer), strings.Join(first, "; "))
		}
	}
	for _, log := range o.logs {
		for _, w := range refusalWords {
			if l := grepLines(log.String(), w); l != "" {
				t.Errorf("a collector logged %q:\n%s", w, l)
			}
		}
	}
	if bad := o.rec.undecodable; len(bad) > 0 {
		t.Errorf("requests the test could not read: %v", bad)
	}
	for _, p := range checkSentSeries(reqs) {
		t.Error("sent: " + p)
	}
	stored, n, err := checkStoredSeries(context.Background(), o.prom, reqs, o.started, o.end)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stored {
		t.Error("stored: " + p)
	}
	t.Logf("bound %d bytes: %d requests (%d while the backend was away), %d samples stored; outage %v, kill %v into it",
		o.bound, len(reqs), countStatus(reqs, http.StatusServiceUnavailable), n, o.up.Sub(o.down).Round(100*time.Millisecond), o.killed.Sub(o.down).Round(100*time.Millisecond))
}

// checkBacklogArrived: with a queue that holds the outage, the killed
// collector's scrapes of it reached the backend once it was back, and
// nothing was dropped.
func checkBacklogArrived(t *testing.T, o *pushOutage) {
	for _, log := range o.logs {
		if l := grepLines(log.String(), "dropped the oldest batch"); l != "" {
			t.Errorf("a collector dropped a batch from a queue of %d bytes:\n%s", o.bound, l)
		}
	}
	for _, q := range o.rec.requests() {
		for _, s := range q.samples {
			if ts := time.UnixMilli(s.ts); q.status/100 == 2 && q.at.After(o.returning) && ts.After(o.down) && ts.Before(o.killed) {
				return
			}
		}
	}
	t.Error("no scrape from between the outage and the kill reached the backend after it came back")
}

// checkNewestKept: the queue filled (the oldest batches were dropped), and
// yet the restarted collector's newest scrapes when sending resumed
// reached the backend: no new batch was refused. (Sending resumes a
// little after the backend is back: a gRPC client reconnects after a
// backoff, and a tight queue may drop some of the outage for scrapes
// made in between.)
func checkNewestKept(t *testing.T, o *pushOutage) {
	full := false
	for _, log := range o.logs {
		full = full || strings.Contains(log.String(), "dropped the oldest batch: queue full")
		if l := grepLines(log.String(), "a new batch was not queued"); l != "" {
			t.Errorf("a collector refused a new batch:\n%s", l)
		}
	}
	if !full {
		t.Errorf("the queue of %d bytes did not fill during the outage", o.bound)
	}
	reqs := o.rec.requests()
	var resumed time.Time
	for _, q := range reqs {
		if q.status/100 == 2 && q.at.After(o.returning) {
			resumed = q.at
			break
		}
	}
	for _, q := range reqs {
		for _, s := range q.samples {
			if ts := time.UnixMilli(s.ts); q.status/100 == 2 && !q.at.Before(resumed) && ts.After(o.killed) && ts.Before(resumed) {
				return
			}
		}
	}
	t.Errorf("no scrape the restarted collector made before sending resumed (%s, %v after the backend came back) reached the backend",
		resumed.Format("15:04:05.000"), resumed.Sub(o.up).Round(time.Millisecond))
}

func countStatus(reqs []deliveredRequest, status int) int {
	n := 0
	for _, q := range reqs {
		if q.status == status {
			n++
		}
	}
	return n
}

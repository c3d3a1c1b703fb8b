// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// thanosReplicaLabel is the external label that tells the receivers apart;
// the querier deduplicates along it.
const thanosReplicaLabel = "receive_replica"

// thanosReceiver is one `thanos receive` of a hashring: it accepts remote
// write, forwards each series to the receivers the hashring names for it,
// stores its own share in a TSDB per tenant and serves it over the store
// API (gRPC).
type thanosReceiver struct {
	name                          string // its receive_replica label
	writePort, grpcPort, httpPort int
	proc                          *harness.Process
}

// writeURL is the receiver's remote-write endpoint.
func (r *thanosReceiver) writeURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/api/v1/receive", r.writePort)
}

// startThanosReceivers starts n receivers in one hashring (ketama) that
// writes every series to rf of them, each on loopback ports of its own,
// with the limits configuration limits (receive's limits file; none when
// ""), and waits until each is ready.
func startThanosReceivers(t *testing.T, bin string, n, rf int, limits string) []*thanosReceiver {
	t.Helper()
	var rs []*thanosReceiver
	var endpoints []string
	for i := range n {
		r := &thanosReceiver{name: fmt.Sprintf("r%d", i), writePort: harness.FreePort(t), grpcPort: harness.FreePort(t), httpPort: harness.FreePort(t)}
		rs = append(rs, r)
		endpoints = append(endpoints, harness.LoopbackAddr(r.grpcPort))
	}
	ring, err := json.Marshal([]map[string]any{{"hashring": "default", "endpoints": endpoints}})
	if err != nil {
		t.Fatal(err)
	}
	ringFile := harness.WriteFile(t, "hashrings.json", string(ring))
	var extra []string
	if limits != "" {
		extra = append(extra, "--receive.limits-config-file="+harness.WriteFile(t, "limits.yaml", limits))
	}
	for _, r := range rs {
		r.proc = harness.Start(t, harness.Launch{
			Name: "thanos receive " + r.name, Path: bin, StopWait: 15 * time.Second,
			Args: append([]string{"receive",
				"--tsdb.path=" + filepath.Join(t.TempDir(), "tsdb"),
				"--tsdb.retention=1d",
				"--remote-write.address=" + harness.LoopbackAddr(r.writePort),
				"--grpc-address=" + harness.LoopbackAddr(r.grpcPort),
				"--http-address=" + harness.LoopbackAddr(r.httpPort),
				// Cap'n Proto replication, not used (gRPC is the default), still listens.
				"--receive.capnproto-address=" + harness.LoopbackAddr(harness.FreePort(t)),
				"--receive.hashrings-file=" + ringFile,
				"--receive.hashrings-algorithm=ketama",
				"--receive.local-endpoint=" + harness.LoopbackAddr(r.grpcPort),
				fmt.Sprintf("--receive.replication-factor=%d", rf),
				fmt.Sprintf("--label=%s=%q", thanosReplicaLabel, r.name),
			}, extra...),
		})
	}
	for _, r := range rs {
		harness.WaitReady(t, r.proc, fmt.Sprintf("http://127.0.0.1:%d/-/ready", r.httpPort), 60*time.Second)
	}
	return rs
}

// startThanosQuery starts `thanos query` on the store APIs of rs,
// deduplicating along receive_replica, and waits until it is ready and
// lists every receiver as a store.
func startThanosQuery(ctx context.Context, t *testing.T, bin string, rs []*thanosReceiver) *harness.Prometheus {
	t.Helper()
	httpPort := harness.FreePort(t)
	args := []string{"query",
		"--http-address=" + harness.LoopbackAddr(httpPort),
		"--grpc-address=" + harness.LoopbackAddr(harness.FreePort(t)),
		"--query.replica-label=" + thanosReplicaLabel,
	}
	for _, r := range rs {
		args = append(args, "--endpoint="+harness.LoopbackAddr(r.grpcPort))
	}
	proc := harness.Start(t, harness.Launch{Name: "thanos query", Path: bin, Args: args, StopWait: 15 * time.Second})
	q := harness.QueryAPIAt(httpPort)
	harness.WaitReady(t, proc, q.URL("/-/ready"), 60*time.Second)
	eventually(t, 30*time.Second, "thanos query lists every receiver", func() []string {
		var stores map[string][]struct {
			Name      string `json:"name"`
			LastError any    `json:"lastError"`
		}
		if err := q.GetAPI(ctx, "/api/v1/stores", &stores); err != nil {
			return []string{err.Error()}
		}
		seen := map[string]bool{}
		for _, ss := range stores {
			for _, s := range ss {
				seen[s.Name] = s.LastError == nil
			}
		}
		var missing []string
		for _, r := range rs {
			if !seen[harness.LoopbackAddr(r.grpcPort)] {
				missing = append(missing, "not a healthy store yet: "+r.name)
			}
		}
		return missing
	})
	return q
}

// thanosRaw returns the raw samples of selector in (at-window, at] through
// the querier, deduplicated or not.
func thanosRaw(ctx context.Context, q *harness.Prometheus, selector string, window time.Duration, at time.Time, dedup bool) (model.Matrix, error) {
	r, err := q.API(ctx, "/api/v1/query", url.Values{
		"query": {fmt.Sprintf("%s[%dms]", selector, window.Milliseconds())},
		"time":  {harness.PromTime(at)}, "dedup": {fmt.Sprint(dedup)},
	})
	if err != nil {
		return nil, err
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: result type %q", selector, r.Data.ResultType)
	}
	var m model.Matrix
	err = json.Unmarshal(r.Data.Result, &m)
	return m, err
}

// tenantSeries returns the series of v by seriesKey without the tenant
// label, with their values, and a problem for each series whose tenant is
// not tenant or that still carries a replica label (not deduplicated).
func tenantSeries(v model.Vector, tenant string) (map[string]float64, []string) {
	out := map[string]float64{}
	var problems []string
	for _, s := range v {
		m := s.Metric.Clone()
		if got := string(m["tenant_id"]); got != tenant {
			problems = append(problems, fmt.Sprintf("tenant_id %q, want %q: %v", got, tenant, s.Metric))
		}
		if _, ok := m[thanosReplicaLabel]; ok {
			problems = append(problems, "not deduplicated: "+s.Metric.String())
		}
		delete(m, "tenant_id")
		out[seriesKey(m)] = float64(s.Value)
	}
	return out, problems
}

// sampleSet is the (series, timestamp) pairs of m, the series by seriesKey
// without the labels named in drop.
func sampleSet(m model.Matrix, drop ...model.LabelName) map[string]bool {
	out := map[string]bool{}
	for _, ss := range m {
		l := ss.Metric.Clone()
		for _, d := range drop {
			delete(l, d)
		}
		k := seriesKey(l)
		for _, p := range ss.Values {
			out[k+"@"+p.Timestamp.String()] = true
		}
	}
	return out
}

// familyOf is the metric name of a sampleSet key.
func familyOf(key string) string {
	return key[:strings.IndexAny(key+"{@", "{@")]
}

// receiverWrites is what a receiver's own metrics say of the remote-write
// requests it answered.
type receiverWrites struct {
	codes           map[string]float64 // requests by HTTP code
	series, samples float64            // per request, on average
	forwards        map[string]float64 // forwards to the other receivers by result
}

// readReceiverWrites scrapes r's metrics.
func readReceiverWrites(ctx context.Context, r *thanosReceiver) (receiverWrites, error) {
	w := receiverWrites{codes: map[string]float64{}, forwards: map[string]float64{}}
	mfs, err := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", r.httpPort))
	if err != nil {
		return w, err
	}
	var n, series, samples float64
	for _, m := range mfs["thanos_receive_write_timeseries"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "code" {
				w.codes[l.GetValue()] += float64(m.GetHistogram().GetSampleCount())
			}
		}
		n += float64(m.GetHistogram().GetSampleCount())
		series += m.GetHistogram().GetSampleSum()
	}
	for _, m := range mfs["thanos_receive_write_samples"].GetMetric() {
		samples += m.GetHistogram().GetSampleSum()
	}
	if n > 0 {
		w.series, w.samples = series/n, samples/n
	}
	for _, m := range mfs["thanos_receive_forward_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "result" {
				w.forwards[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return w, nil
}

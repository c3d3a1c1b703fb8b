// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// ThanosReplicaLabel is the external label that tells the receivers apart;
// the querier deduplicates along it.
const ThanosReplicaLabel = "receive_replica"

// ThanosReceiver is one `thanos receive` of a hashring: it accepts remote
// write, forwards each series to the receivers the hashring names for it,
// stores its own share in a TSDB per tenant and serves it over the store
// API (gRPC). It can be stopped or killed and started again on the same
// ports and TSDB.
type ThanosReceiver struct {
	// Name is its receive_replica label.
	Name                          string
	WritePort, GRPCPort, HTTPPort int
	// Proc is the running (or last) process; Log its output over every start.
	Proc *Process
	Log  *LockedBuffer

	t      testing.TB
	launch Launch
}

// ThanosReceiveOptions are a hashring's receivers.
type ThanosReceiveOptions struct {
	// Receivers in the hashring, and the replication factor.
	Receivers, ReplicationFactor int
	// LimitsFile is receive's limits configuration (--receive.limits-config-file),
	// reloaded when it changes; none when "".
	LimitsFile string
	// Args are added to every receiver's flags.
	Args []string
}

// WriteURL is the receiver's remote-write endpoint.
func (r *ThanosReceiver) WriteURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/api/v1/receive", r.WritePort)
}

// MetricsURL is the receiver's own metrics.
func (r *ThanosReceiver) MetricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", r.HTTPPort)
}

// StoreAddr is its store API (gRPC) address, as the querier names it.
func (r *ThanosReceiver) StoreAddr() string { return LoopbackAddr(r.GRPCPort) }

// StartThanosReceivers starts o.Receivers receivers in one hashring
// (ketama) that writes every series to o.ReplicationFactor of them, each on
// loopback ports of its own, and waits until each is ready.
func StartThanosReceivers(t testing.TB, bin string, o ThanosReceiveOptions) []*ThanosReceiver {
	t.Helper()
	var rs []*ThanosReceiver
	var endpoints []string
	for i := range o.Receivers {
		r := &ThanosReceiver{Name: fmt.Sprintf("r%d", i), WritePort: FreePort(t), GRPCPort: FreePort(t), HTTPPort: FreePort(t), Log: &LockedBuffer{}, t: t}
		rs = append(rs, r)
		endpoints = append(endpoints, r.StoreAddr())
	}
	ring, err := json.Marshal([]map[string]any{{"hashring": "default", "endpoints": endpoints}})
	if err != nil {
		t.Fatal(err)
	}
	ringFile := WriteFile(t, "hashrings.json", string(ring))
	var extra []string
	if o.LimitsFile != "" {
		extra = append(extra, "--receive.limits-config-file="+o.LimitsFile)
	}
	for _, r := range rs {
		r.launch = Launch{
			Name: "thanos receive " + r.Name, Path: bin, StopWait: 15 * time.Second, Log: r.Log,
			Args: append(append([]string{"receive",
				"--tsdb.path=" + filepath.Join(t.TempDir(), "tsdb"),
				"--tsdb.retention=1d",
				"--remote-write.address=" + LoopbackAddr(r.WritePort),
				"--grpc-address=" + r.StoreAddr(),
				"--http-address=" + LoopbackAddr(r.HTTPPort),
				// Cap'n Proto replication, not used (gRPC is the default), still listens.
				"--receive.capnproto-address=" + LoopbackAddr(FreePort(t)),
				"--receive.hashrings-file=" + ringFile,
				"--receive.hashrings-algorithm=ketama",
				"--receive.local-endpoint=" + r.StoreAddr(),
				fmt.Sprintf("--receive.replication-factor=%d", o.ReplicationFactor),
				fmt.Sprintf("--label=%s=%q", ThanosReplicaLabel, r.Name),
			}, extra...), o.Args...),
		}
		r.Proc = Start(t, r.launch)
	}
	for _, r := range rs {
		r.WaitReady(60 * time.Second)
	}
	return rs
}

// WaitReady waits up to d for the receiver's /-/ready.
func (r *ThanosReceiver) WaitReady(d time.Duration) {
	r.t.Helper()
	WaitReady(r.t, r.Proc, fmt.Sprintf("http://127.0.0.1:%d/-/ready", r.HTTPPort), d)
}

// Start starts a stopped or killed receiver again, on its ports and TSDB
// (it replays its write-ahead log), without waiting for it to be ready.
func (r *ThanosReceiver) Start() {
	r.t.Helper()
	if r.Proc.Running() {
		r.t.Fatalf("%s is still running", r.Name)
	}
	r.Proc = Start(r.t, r.launch)
}

// ReceiverWrites is what a receiver's own metrics say of the remote-write
// requests it answered.
type ReceiverWrites struct {
	Codes           map[string]float64 // requests by HTTP code
	Series, Samples float64            // per request, on average
	Forwards        map[string]float64 // forwards to the other receivers by result
}

// ReadReceiverWrites scrapes r's metrics.
func ReadReceiverWrites(ctx context.Context, r *ThanosReceiver) (ReceiverWrites, error) {
	w := ReceiverWrites{Codes: map[string]float64{}, Forwards: map[string]float64{}}
	mfs, err := Scrape(ctx, r.MetricsURL())
	if err != nil {
		return w, err
	}
	var n, series, samples float64
	for _, m := range mfs["thanos_receive_write_timeseries"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "code" {
				w.Codes[l.GetValue()] += float64(m.GetHistogram().GetSampleCount())
			}
		}
		n += float64(m.GetHistogram().GetSampleCount())
		series += m.GetHistogram().GetSampleSum()
	}
	for _, m := range mfs["thanos_receive_write_samples"].GetMetric() {
		samples += m.GetHistogram().GetSampleSum()
	}
	if n > 0 {
		w.Series, w.Samples = series/n, samples/n
	}
	for _, m := range mfs["thanos_receive_forward_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "result" {
				w.Forwards[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return w, nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The delivery alerts (the group rocm-ernic-delivery of
// dashboards/alerts.yaml) against a real Prometheus that evaluates them,
// fed by the collector with config/prometheus-remote-write.yaml through a
// backend that refuses, fails and takes the data slowly (backendProxy).
// Time runs alertScale times faster for the rules, as in
// TestDashboardsAndAlerts; the numeric thresholds are the shipped ones, so
// a host must really be 120 s behind.

// deliveryWorld is one delivery-alert test's collector, proxy and ruler.
type deliveryWorld struct {
	*rwSetup
	proxy *backendProxy
	host  string
	a     *alertRun
}

// newDeliveryWorld starts a Prometheus that evaluates the scaled delivery
// rules, a proxy in front of it, the simulator and the collector (env:
// more of its environment), and waits for data.
func newDeliveryWorld(t *testing.T, ctx context.Context, seed int64, env ...string) *deliveryWorld {
	t.Helper()
	harness.CollectorBinary(t)
	ruleDir := t.TempDir()
	prom := rulesPrometheus(t, ruleDir, dashboards.ScaleDuration(5*time.Minute, alertScale))
	r := newRemoteWriteTo(t, sim.Options{Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: seed}, prom)
	proxy, url := newBackendProxy(t, prom.URL(""))
	r.setEnv("ERNIC_REMOTE_WRITE_URL", url)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		r.setEnv(name, value)
	}
	r.startCollector()
	r.waitFresh(ctx, waitTimeout, `ernic_stats_writes_total{ernic_id="2"}`, "data in Prometheus")
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}

	_, _, scaled := loadBoardAndRules(t)
	delivery := &dashboards.RuleFile{}
	for _, g := range scaled.Groups {
		if g.Name == "rocm-ernic-delivery" {
			delivery.Groups = append(delivery.Groups, g)
		}
	}
	if len(delivery.Alerts()) != 5 {
		t.Fatalf("%d alerts in the group rocm-ernic-delivery, want 5", len(delivery.Alerts()))
	}
	return &deliveryWorld{rwSetup: r, proxy: proxy, host: host, a: loadAlerts(t, ctx, prom, ruleDir, delivery, 5)}
}

// firingLabels are the label sets of the alerts name that fire now.
func (w *deliveryWorld) firingLabels(ctx context.Context, name string) []map[string]string {
	w.t.Helper()
	var data struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	if err := w.prom.GetAPI(ctx, "/api/v1/alerts", &data); err != nil {
		w.t.Fatal(err)
	}
	var out []map[string]string
	for _, a := range data.Alerts {
		if a.Labels["alertname"] == name && a.State == "firing" {
			out = append(out, a.Labels)
		}
	}
	return out
}

// wantFiring fails the test unless name fires with exactly the labels want
// (and alertname, severity, instance, job).
func (w *deliveryWorld) wantFiring(ctx context.Context, name, severity string, want map[string]string) {
	w.t.Helper()
	full := map[string]string{"alertname": name, "severity": severity, "instance": w.host}
	if name != "ErnicDeliverySilent" {
		full["job"] = "ernic"
	}
	for k, v := range want {
		full[k] = v
	}
	got := w.firingLabels(ctx, name)
	if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(full) {
		w.t.Errorf("%s fires with %v, want exactly %v", name, got, full)
	}
}

// TestDeliveryAlertsOutage: a rejection fires ErnicDeliveryRejected; a
// 150 s outage (503) fires ErnicDeliverySilent while it lasts; the backlog
// then drains, oldest first, through a backend that takes 200 ms a
// request, and the outage's samples, arriving late, fire
// ErnicDeliveryBehind until the host has caught up. Afterwards Prometheus
// holds the outage's record: the backlog's rise, second by second, and the
// retries.
func TestDeliveryAlertsOutage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newDeliveryWorld(t, ctx, 41)
	a := w.a

	a.provoke("rejected", alertKey{name: "ErnicDeliveryRejected"}, "another writer's ernic_instances 5s ahead: Prometheus answers 400 (out of order) for 5s", func() error {
		writeForeignSample(t, w.prom.WriteURL(), "ernic_instances", time.Now().Add(5*time.Second))
		return nil
	})
	a.ev["rejected"].ends = a.ev["rejected"].at.Add(5 * time.Second)
	a.waitFiring("rejected")
	w.wantFiring(ctx, "ErnicDeliveryRejected", "warning", map[string]string{"exporter": "remote_write", "reason": "http_400"})

	const outage = 150 * time.Second
	a.provoke("silent", alertKey{name: "ErnicDeliverySilent"}, "the backend answers 503 for 150s", func() error {
		w.proxy.setDown(true)
		return nil
	})
	down := a.ev["silent"].at
	a.waitFiring("silent")
	w.wantFiring(ctx, "ErnicDeliverySilent", "warning", nil)
	time.Sleep(time.Until(down.Add(outage)))

	// Back, but slow: the backlog drains over a minute, oldest first.
	w.proxy.setDelay(200 * time.Millisecond)
	w.proxy.setDown(false)
	up := time.Now()
	a.ev["silent"].ends = up
	a.ev["silent"].how += "; ended by the backend's return, 200ms a request"
	a.ev["behind"] = &provoked{key: alertKey{name: "ErnicDeliveryBehind"}, how: "the 150s outage's backlog drained at 200ms a request", at: up}
	a.waitFiring("behind")
	w.wantFiring(ctx, "ErnicDeliveryBehind", "warning", map[string]string{"exporter": "remote_write"})
	w.proxy.setDelay(0)
	a.ev["behind"].ends = time.Now()
	a.ev["behind"].how += "; ended by the backend at full speed"
	a.waitResolved("behind", "silent", "rejected")
	t.Run("alert_cycles", a.checkCycles("rejected", "silent", "behind"))

	// The record of the outage, sent after it: a sample of the backlog
	// every second of it (the selftelemetry collection interval), rising.
	sel := fmt.Sprintf(`otelcol_delivery_queue_bytes{instance=%q, exporter="remote_write"}`, w.host)
	m, err := w.prom.RawSamples(ctx, sel, time.Since(down)+time.Minute, time.Now())
	if err != nil || len(m) != 1 {
		t.Fatalf("%s: %v (%v)", sel, m, err)
	}
	var during []model.SamplePair
	for _, sp := range m[0].Values {
		if at := sp.Timestamp.Time(); at.After(down.Add(2*time.Second)) && at.Before(up) {
			during = append(during, sp)
		}
	}
	if want := int(0.9 * (outage - 2*time.Second).Seconds()); len(during) < want {
		t.Errorf("%d samples of the backlog from the outage in Prometheus, want at least %d (one a second)", len(during), want)
	} else if first, last := during[0].Value, during[len(during)-1].Value; last <= first {
		t.Errorf("the backlog during the outage went from %v to %v bytes: it must rise", first, last)
	}
	for q, min := range map[string]float64{
		fmt.Sprintf(`otelcol_delivery_points_retried_total{instance=%q, reason="http_503"}`, w.host):  1,
		fmt.Sprintf(`otelcol_delivery_points_rejected_total{instance=%q, reason="http_400"}`, w.host): 1,
	} {
		if got, err := w.prom.ScalarAt(ctx, q, time.Now()); err != nil || got < min {
			t.Errorf("%s = %v (%v), want at least %v", q, got, err, min)
		}
	}
	if got, err := w.prom.ScalarAt(ctx, fmt.Sprintf(`sum(otelcol_delivery_points_dropped_total{instance=%q})`, w.host), time.Now()); err != nil || got != 0 {
		t.Errorf("points dropped: %v (%v), want 0 (the queue's bound holds the outage)", got, err)
	}
	if len(during) > 0 {
		t.Logf("the outage's record: %d backlog samples, %v to %v bytes; requests passed %d, refused %d",
			len(during), during[0].Value, during[len(during)-1].Value, w.proxy.served.Load(), w.proxy.refused.Load())
	}
}

// TestDeliveryAlertsQueueBound: with a small bound (20 kB, about 10 s of
// this host's data), a 20 s outage fills the queue and drops the oldest
// batches, and a backend slower than the host keeps it full:
// ErnicDeliveryDropping and ErnicDeliveryQueueNearFull fire, and resolve
// once the backend takes the data at full speed (the drops an hour, 3
// minutes scaled, after the last).
func TestDeliveryAlertsQueueBound(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newDeliveryWorld(t, ctx, 42, "ERNIC_BUFFER_MAX_BYTES=20000")
	a := w.a

	how := "the backend answers 503 for 20s, then takes 800ms a request"
	a.provoke("nearfull", alertKey{name: "ErnicDeliveryQueueNearFull"}, how, func() error {
		w.proxy.setDown(true)
		return nil
	})
	a.ev["dropping"] = &provoked{key: alertKey{name: "ErnicDeliveryDropping"}, how: how, at: a.ev["nearfull"].at}
	time.Sleep(20 * time.Second)
	w.proxy.setDelay(800 * time.Millisecond)
	w.proxy.setDown(false)
	a.waitFiring("dropping")
	w.wantFiring(ctx, "ErnicDeliveryDropping", "critical", map[string]string{"exporter": "remote_write", "reason": "oldest"})
	a.waitFiring("nearfull")
	w.wantFiring(ctx, "ErnicDeliveryQueueNearFull", "warning", map[string]string{"exporter": "remote_write"})
	w.proxy.setDelay(0)
	for _, name := range []string{"nearfull", "dropping"} {
		a.ev[name].ends = time.Now()
		a.ev[name].how += "; ended by the backend at full speed"
	}
	a.waitResolved("nearfull")
	eventually(t, 5*time.Minute, "ErnicDeliveryDropping resolved, an hour (3 minutes) after the last drop", func() []string {
		if c, _ := a.watch.Cycle(a.ev["dropping"].key, a.ev["dropping"].at); c.Resolved.IsZero() {
			return []string{fmt.Sprintf("still active: %+v", c)}
		}
		return nil
	})
	t.Run("alert_cycles", a.checkCycles("nearfull", "dropping"))

	q := fmt.Sprintf(`otelcol_delivery_points_dropped_total{instance=%q, reason="oldest"}`, w.host)
	if got, err := w.prom.ScalarAt(ctx, q, time.Now()); err != nil || got < 1 {
		t.Errorf("%s = %v (%v), want the oldest batches' points", q, got, err)
	} else {
		t.Logf("%s = %v; requests passed %d, refused %d", q, got, w.proxy.served.Load(), w.proxy.refused.Load())
	}
}

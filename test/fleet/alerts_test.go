// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// alertKey names an alert instance of the fleet: the rule, the host, and
// for the delivery rules the exporter.
type alertKey struct{ name, instance, exporter string }

// silenceAlerts are the shipped rules that see a host, or the whole fleet,
// send nothing: what an outage of the backend looks like to a ruler that
// reads it.
var silenceAlerts = []string{"ErnicNoData", "ErnicHostNoData"}

// watchRuler watches the ruler's alerts every second.
func watchRuler(ctx context.Context, b *backend) *harness.AlertWatch[alertKey] {
	return harness.WatchAlerts(ctx, b.ruler, time.Second, func(l map[string]string) alertKey {
		return alertKey{l["alertname"], l["instance"], l["exporter"]}
	})
}

// checkSilenceAlerts checks the silence alerts as an operator expects them
// around the outage: none before it; while every receiver is down the
// ruler cannot evaluate (its evaluations fail) and so changes nothing;
// once the backend is back, an alert fires only for a host whose backlog
// is not yet delivered, and resolves by the time it is. It logs the
// timings.
func checkSilenceAlerts(ctx context.Context, t *testing.T, w *harness.AlertWatch[alertKey], b *backend, f *fleet, o *outage, c *catchUp, steadyFrom time.Time) {
	t.Helper()
	first, last, err := b.ruleFailures(ctx, steadyFrom, c.last)
	switch {
	case err != nil:
		t.Error(err)
	case first.IsZero() || first.After(o.back):
		t.Errorf("the ruler's evaluations did not fail while every receiver was down (failed from %v to %v)", first, last)
	default:
		t.Logf("the ruler's evaluations failed from %+v to %+v after the outage began (the backend back at %+v)",
			first.Sub(o.start).Round(time.Second), last.Sub(o.start).Round(time.Second), o.length().Round(time.Second))
	}
	// A resolution is seen by the watch within a poll, after an
	// evaluation every second.
	checkOutageAlerts(ctx, t, w, b, f, o, c, steadyFrom, silenceAlerts, 5*time.Second)
}

// checkOutageAlerts checks every cycle of the rules names: none active
// before the outage or at the end; one that fired did so before the
// backend held the host's new data again (catchUp.drained) and resolved
// within slack of it. A cycle that
// only went pending (a host briefly without a sample in a window: the
// querier answering from the receivers it has reconnected to, or new data
// held back by the ingest limit) is counted, not failed: it notifies no
// one. It logs the timings and returns the hosts each rule fired for.
func checkOutageAlerts(ctx context.Context, t *testing.T, w *harness.AlertWatch[alertKey], b *backend, f *fleet, o *outage, c *catchUp, steadyFrom time.Time, names []string, slack time.Duration) map[string][]string {
	t.Helper()
	firedFor := map[string][]string{}
	// Per rule, the spread of each stage's time after the backend's return.
	type spread struct {
		n, pendingOnly        int
		firing, resolved, lag [2]time.Duration
	}
	widen := func(r *[2]time.Duration, d time.Duration, first bool) {
		if first || d < r[0] {
			r[0] = d
		}
		if first || d > r[1] {
			r[1] = d
		}
	}
	rules := map[string]*spread{}
	var pendingOnly []string
	for _, k := range w.Keys() {
		if !slices.Contains(names, k.name) {
			continue
		}
		end := c.lastDrained
		if h := hostNamed(f, k.instance); h != nil {
			end = c.drained[h.name]
		}
		sp := rules[k.name]
		if sp == nil {
			sp = &spread{}
			rules[k.name] = sp
		}
		for _, cy := range w.Cycles(k) {
			row := fmt.Sprintf("%v pending %s, firing %s, resolved %s after the backend's return; its new data fresh in the backend %s after",
				k, since(o, cy.Pending), since(o, cy.Firing), since(o, cy.Resolved), since(o, end))
			switch {
			case cy.Pending.Before(steadyFrom):
				continue // the fleet starting: waitRulerQuiet saw it resolved
			case cy.Pending.Before(o.start):
				t.Errorf("%v was active before the outage (pending %s, steady from %s)", k, cy.Pending.UTC().Format(time.TimeOnly), steadyFrom.UTC().Format(time.TimeOnly))
			case cy.Resolved.IsZero():
				t.Errorf("%v still active at the end", k)
			case cy.Firing.IsZero():
				sp.pendingOnly++
				pendingOnly = append(pendingOnly, row)
			default:
				firedFor[k.name] = append(firedFor[k.name], k.instance)
				widen(&sp.firing, cy.Firing.Sub(o.back), sp.n == 0)
				widen(&sp.resolved, cy.Resolved.Sub(o.back), sp.n == 0)
				widen(&sp.lag, cy.Resolved.Sub(end), sp.n == 0)
				sp.n++
				if cy.Firing.After(end) || cy.Resolved.After(end.Add(slack)) {
					t.Errorf("%s: fired for a host whose new data was in the backend, or outlasted that; %s; %s", row,
						storedBefore(ctx, b, k.instance, cy.Firing), lagRecord(ctx, b, k.instance, o.back, cy.Resolved))
				}
			}
		}
	}
	var lines []string
	for _, name := range names {
		sp := rules[name]
		if sp == nil {
			lines = append(lines, name+": never active")
			continue
		}
		r := func(d [2]time.Duration) string {
			return fmt.Sprintf("%+v to %+v", d[0].Round(time.Second), d[1].Round(time.Second))
		}
		lines = append(lines, fmt.Sprintf("%s: fired for %d (firing %s, resolved %s after the backend's return; %s from the host's new data fresh again), only pending for %d",
			name, sp.n, r(sp.firing), r(sp.resolved), r(sp.lag), sp.pendingOnly))
	}
	slices.Sort(pendingOnly)
	t.Logf("after the outage (rules %d times faster; lookback %v):\n  %s\n  e.g. only pending: %s",
		ruleScale, 5*time.Minute/ruleScale, strings.Join(lines, "\n  "), strings.Join(pendingOnly[:min(3, len(pendingOnly))], "; "))
	return firedFor
}

// since is at after the backend's return, "-" for none.
func since(o *outage, at time.Time) string {
	if at.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%+v", at.Sub(o.back).Round(time.Second))
}

func (k alertKey) String() string {
	if k.exporter != "" {
		return fmt.Sprintf("%s{instance=%q, exporter=%q}", k.name, k.instance, k.exporter)
	}
	return fmt.Sprintf("%s{instance=%q}", k.name, k.instance)
}

// hostNamed is the host called name, nil for none ("" for ErnicNoData).
func hostNamed(f *fleet, name string) *host {
	for _, h := range f.hosts {
		if h.name == name {
			return h
		}
	}
	return nil
}

// waitRulerQuiet waits until the ruler has no silence alert active: it
// sees the whole fleet.
func waitRulerQuiet(ctx context.Context, t *testing.T, b *backend) {
	t.Helper()
	harness.Eventually(t, time.Minute, "no silence alert at the ruler", func() []string {
		var data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
			} `json:"alerts"`
		}
		if err := b.ruler.GetAPI(ctx, "/api/v1/alerts", &data); err != nil {
			return []string{err.Error()}
		}
		var active []string
		for _, a := range data.Alerts {
			if slices.Contains(silenceAlerts, a.Labels["alertname"]) {
				active = append(active, alertKey{a.Labels["alertname"], a.Labels["instance"], ""}.String())
			}
		}
		return active
	})
}

// storedBefore says when the samples of ernic_instances of instance within
// the lookback before `at` were stored, as the querier returns them now,
// per receiver, and as the reference has them.
func storedBefore(ctx context.Context, b *backend, instance string, at time.Time) string {
	sel := fmt.Sprintf(`ernic_instances{instance=%q}`, instance)
	lookback := 5 * time.Minute / ruleScale
	var parts []string
	raw, err := harness.ThanosRaw(ctx, b.query, sel, lookback, at, false)
	if err != nil {
		return err.Error()
	}
	for _, ss := range raw {
		var ts []string
		for _, p := range ss.Values {
			ts = append(ts, p.Timestamp.Time().UTC().Format(time.TimeOnly))
		}
		parts = append(parts, fmt.Sprintf("%s: %v", ss.Metric[harness.ThanosReplicaLabel], ts))
	}
	if ref, err := b.reference.RawSamples(ctx, sel, lookback, at); err == nil && len(ref) == 1 {
		parts = append(parts, fmt.Sprintf("reference: %d samples", len(ref[0].Values)))
	}
	return fmt.Sprintf("stored in the %v before: %s", lookback, strings.Join(parts, "; "))
}

// lagRecord is the host's remote_write lag as its record in the backend
// has it from `from` to `to`: each sample's time, the lag it reports
// (queued newest - sent newest) and the queued points.
func lagRecord(ctx context.Context, b *backend, instance string, from, to time.Time) string {
	h := &host{name: instance}
	get := func(metric string) map[model.Time]float64 {
		got, err := hostSeries(ctx, b, metric, `, exporter="remote_write"`, h, "exporter", from, to)
		out := map[model.Time]float64{}
		if err == nil {
			for _, p := range got["remote_write"] {
				out[p.Timestamp] = float64(p.Value)
			}
		}
		return out
	}
	queued, sent, points := get("otelcol_delivery_queued_newest_timestamp_seconds"), get("otelcol_delivery_sent_newest_timestamp_seconds"), get("otelcol_delivery_queue_points")
	var rows []string
	for _, at := range slices.Sorted(maps.Keys(queued)) {
		rows = append(rows, fmt.Sprintf("%s lag %.0fs, %v points", at.Time().UTC().Format(time.TimeOnly), queued[at]-sent[at], points[at]))
	}
	return "its record: " + strings.Join(rows, "; ")
}

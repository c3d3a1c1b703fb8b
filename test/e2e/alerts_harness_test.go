// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The alerts of a Prometheus as TestDashboardsAndAlerts and TestFleet see
// them: a watch of /api/v1/alerts that keeps every cycle of every alert
// instance, and the alerts the test provokes.

// alertKey names one alert instance.
type alertKey struct{ name, id, counter string }

func (k alertKey) String() string {
	s := k.name
	if k.id != "" {
		s += "{ernic_id=" + k.id
		if k.counter != "" {
			s += ",counter=" + k.counter
		}
		s += "}"
	}
	return s
}

// watchAlerts watches p's alerts by alertKey.
func watchAlerts(ctx context.Context, p *harness.Prometheus, every time.Duration) *harness.AlertWatch[alertKey] {
	return harness.WatchAlerts(ctx, p, every, func(l map[string]string) alertKey {
		return alertKey{l["alertname"], l["ernic_id"], l["counter"]}
	})
}

// provoked is an alert the test causes: when, and when the test ended the
// condition (zero: it ends by itself, when the event leaves the window).
type provoked struct {
	key      alertKey
	how      string
	at, ends time.Time
}

// alertRun is the alerts TestDashboardsAndAlerts provokes, by name, and
// the watch that sees their cycles.
type alertRun struct {
	t     *testing.T
	watch *harness.AlertWatch[alertKey]
	ev    map[string]*provoked
}

// must fails the test on err.
func (a *alertRun) must(err error) {
	a.t.Helper()
	if err != nil {
		a.t.Fatal(err)
	}
}

// provoke causes the alert key, recorded as name, by do (how says what it
// does).
func (a *alertRun) provoke(name string, key alertKey, how string, do func() error) {
	a.t.Helper()
	at := time.Now()
	a.must(do())
	a.ev[name] = &provoked{key: key, how: how, at: at}
}

// waitFiring waits up to 90s for the alert name to fire.
func (a *alertRun) waitFiring(name string) {
	a.t.Helper()
	e := a.ev[name]
	eventually(a.t, 90*time.Second, e.key.String()+" firing", func() []string {
		if c, ok := a.watch.Cycle(e.key, e.at); !ok || c.Firing.IsZero() {
			return []string{fmt.Sprintf("%s after %s: %+v (seen: %v)", e.key, e.how, c, a.watch.Keys())}
		}
		return nil
	})
}

// end waits for the alert name to fire, then ends its condition by do.
func (a *alertRun) end(name, how string, do func() error) {
	a.t.Helper()
	a.waitFiring(name)
	a.ev[name].ends = time.Now()
	a.ev[name].how += "; ended by " + how
	a.must(do())
}

// waitResolved waits up to 90s for each alert of names to resolve.
func (a *alertRun) waitResolved(names ...string) {
	a.t.Helper()
	for _, name := range names {
		e := a.ev[name]
		eventually(a.t, 90*time.Second, e.key.String()+" resolved", func() []string {
			if c, _ := a.watch.Cycle(e.key, e.at); c.Resolved.IsZero() {
				return []string{fmt.Sprintf("%s still active: %+v", e.key, c)}
			}
			return nil
		})
	}
}

// checkCycles returns the check of the timings of the provoked alerts
// names, in that order (pending, then firing, then resolved after its
// condition ended), and that no alert was active but the provoked ones
// (device resets excepted: the simulator resets a worker every 60s by
// itself).
func (a *alertRun) checkCycles(names ...string) func(*testing.T) {
	return func(t *testing.T) { a.checkCyclesOf(t, names) }
}

func (a *alertRun) checkCyclesOf(t *testing.T, names []string) {
	watch, ev := a.watch, a.ev
	var rows []string
	for _, name := range names {
		e := ev[name]
		c, _ := watch.Cycle(e.key, e.at)
		row := fmt.Sprintf("%-58s pending +%v, firing +%v", e.key, c.Pending.Sub(e.at).Round(100*time.Millisecond), c.Firing.Sub(e.at).Round(100*time.Millisecond))
		if e.ends.IsZero() {
			row += fmt.Sprintf(", resolved +%v (the event left the scaled window)", c.Resolved.Sub(e.at).Round(100*time.Millisecond))
		} else {
			row += fmt.Sprintf(", resolved %v after the condition ended", c.Resolved.Sub(e.ends).Round(100*time.Millisecond))
		}
		rows = append(rows, row+"   ["+e.how+"]")
		if c.Pending.IsZero() || c.Firing.Before(c.Pending) || c.Resolved.IsZero() || (!e.ends.IsZero() && c.Resolved.Before(e.ends)) {
			t.Errorf("%s: pending %v, firing %v, resolved %v; ended %v", e.key, c.Pending, c.Firing, c.Resolved, e.ends)
		}
	}
	t.Logf("alerts (scaled rules: for and windows / %d, lookback %s; times from the provocation):\n  %s",
		alertScale, dashboards.ScaleDuration(5*time.Minute, alertScale), strings.Join(rows, "\n  "))
	for _, k := range watch.Keys() {
		if k.name == "ErnicDeviceReset" {
			continue
		}
		if !slices.ContainsFunc(slices.Collect(maps.Values(ev)), func(e *provoked) bool { return e.key == k }) {
			t.Errorf("alert %s was active but nothing provoked it", k)
		}
	}

}

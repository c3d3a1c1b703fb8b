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
	"sync"
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

// alertCycle is one life of an alert instance: when Prometheus made it
// pending (activeAt), when the watcher first saw it firing, and when the
// watcher first missed it after that (zero while it lasts).
type alertCycle struct {
	pending, firing, resolved time.Time
}

// alertWatch polls /api/v1/alerts and keeps every cycle of every alert.
type alertWatch struct {
	mu     sync.Mutex
	cycles map[alertKey][]*alertCycle
	errs   int
}

func watchAlerts(ctx context.Context, p *harness.Prometheus, every time.Duration) *alertWatch {
	w := &alertWatch{cycles: map[alertKey][]*alertCycle{}}
	go func() {
		for ctx.Err() == nil {
			var data struct {
				Alerts []struct {
					Labels   map[string]string `json:"labels"`
					State    string            `json:"state"`
					ActiveAt time.Time         `json:"activeAt"`
				} `json:"alerts"`
			}
			err := p.GetAPI(ctx, "/api/v1/alerts", &data)
			now := time.Now()
			w.mu.Lock()
			if err != nil {
				w.errs++
			} else {
				seen := map[alertKey]bool{}
				for _, a := range data.Alerts {
					k := alertKey{a.Labels["alertname"], a.Labels["ernic_id"], a.Labels["counter"]}
					seen[k] = true
					cs := w.cycles[k]
					if len(cs) == 0 || !cs[len(cs)-1].resolved.IsZero() {
						cs = append(cs, &alertCycle{pending: a.ActiveAt})
						w.cycles[k] = cs
					}
					if c := cs[len(cs)-1]; a.State == "firing" && c.firing.IsZero() {
						c.firing = now
					}
				}
				for k, cs := range w.cycles {
					if c := cs[len(cs)-1]; !seen[k] && c.resolved.IsZero() {
						c.resolved = now
					}
				}
			}
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
	}()
	return w
}

// cycle returns a copy of k's first cycle that became pending at or after
// since (less a second of slack for activeAt's evaluation time).
func (w *alertWatch) cycle(k alertKey, since time.Time) (alertCycle, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.cycles[k] {
		if !c.pending.Before(since.Add(-time.Second)) {
			return *c, true
		}
	}
	return alertCycle{}, false
}

// keys returns every alert instance seen so far.
func (w *alertWatch) keys() []alertKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []alertKey
	for k := range w.cycles {
		out = append(out, k)
	}
	return out
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
	watch *alertWatch
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
		if c, ok := a.watch.cycle(e.key, e.at); !ok || c.firing.IsZero() {
			return []string{fmt.Sprintf("%s after %s: %+v (seen: %v)", e.key, e.how, c, a.watch.keys())}
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
			if c, _ := a.watch.cycle(e.key, e.at); c.resolved.IsZero() {
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
		c, _ := watch.cycle(e.key, e.at)
		row := fmt.Sprintf("%-58s pending +%v, firing +%v", e.key, c.pending.Sub(e.at).Round(100*time.Millisecond), c.firing.Sub(e.at).Round(100*time.Millisecond))
		if e.ends.IsZero() {
			row += fmt.Sprintf(", resolved +%v (the event left the scaled window)", c.resolved.Sub(e.at).Round(100*time.Millisecond))
		} else {
			row += fmt.Sprintf(", resolved %v after the condition ended", c.resolved.Sub(e.ends).Round(100*time.Millisecond))
		}
		rows = append(rows, row+"   ["+e.how+"]")
		if c.pending.IsZero() || c.firing.Before(c.pending) || c.resolved.IsZero() || (!e.ends.IsZero() && c.resolved.Before(e.ends)) {
			t.Errorf("%s: pending %v, firing %v, resolved %v; ended %v", e.key, c.pending, c.firing, c.resolved, e.ends)
		}
	}
	t.Logf("alerts (scaled rules: for and windows / %d, lookback %s; times from the provocation):\n  %s",
		alertScale, dashboards.ScaleDuration(5*time.Minute, alertScale), strings.Join(rows, "\n  "))
	for _, k := range watch.keys() {
		if k.name == "ErnicDeviceReset" {
			continue
		}
		if !slices.ContainsFunc(slices.Collect(maps.Values(ev)), func(e *provoked) bool { return e.key == k }) {
			t.Errorf("alert %s was active but nothing provoked it", k)
		}
	}

}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"sync"
	"time"
)

// AlertCycle is one life of an alert instance: when the rule engine made
// it pending (its activeAt), when the watch first saw it firing, and when
// the watch first missed it after that (zero while it lasts).
type AlertCycle struct {
	Pending, Firing, Resolved time.Time
}

// AlertWatch polls a rule engine's /api/v1/alerts (a Prometheus's or
// Thanos rule's) and keeps every cycle of every alert instance, by a key
// of the test's choosing.
type AlertWatch[K comparable] struct {
	mu     sync.Mutex
	cycles map[K][]*AlertCycle
	errs   int
}

// WatchAlerts polls p every `every` until ctx ends; key names an alert
// instance from its labels (alertname included).
func WatchAlerts[K comparable](ctx context.Context, p *Prometheus, every time.Duration, key func(labels map[string]string) K) *AlertWatch[K] {
	w := &AlertWatch[K]{cycles: map[K][]*AlertCycle{}}
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
				seen := map[K]bool{}
				for _, a := range data.Alerts {
					k := key(a.Labels)
					seen[k] = true
					cs := w.cycles[k]
					if len(cs) == 0 || !cs[len(cs)-1].Resolved.IsZero() {
						cs = append(cs, &AlertCycle{Pending: a.ActiveAt})
						w.cycles[k] = cs
					}
					if c := cs[len(cs)-1]; a.State == "firing" && c.Firing.IsZero() {
						c.Firing = now
					}
				}
				for k, cs := range w.cycles {
					if c := cs[len(cs)-1]; !seen[k] && c.Resolved.IsZero() {
						c.Resolved = now
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

// Cycle returns a copy of k's first cycle that became pending at or after
// since (less a second of slack for activeAt's evaluation time).
func (w *AlertWatch[K]) Cycle(k K, since time.Time) (AlertCycle, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.cycles[k] {
		if !c.Pending.Before(since.Add(-time.Second)) {
			return *c, true
		}
	}
	return AlertCycle{}, false
}

// Cycles returns copies of every cycle of k.
func (w *AlertWatch[K]) Cycles(k K) []AlertCycle {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []AlertCycle
	for _, c := range w.cycles[k] {
		out = append(out, *c)
	}
	return out
}

// Keys returns every alert instance seen so far.
func (w *AlertWatch[K]) Keys() []K {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []K
	for k := range w.cycles {
		out = append(out, k)
	}
	return out
}

// Errors is how many polls failed.
func (w *AlertWatch[K]) Errors() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errs
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// catchUp is how the fleet delivered its backlogs after the outage.
type catchUp struct {
	// end is when the backend first held each host's samples up to its
	// return (caughtUp, polled every 250 ms); last the latest.
	end  map[string]time.Time
	last time.Time
	// drained is when the backend last began to hold each host's newest
	// data within freshWithin of now, and went on holding it (its new data
	// held back by the ingest limit included); lastDrained the latest.
	drained     map[string]time.Time
	lastDrained time.Time
	// outageStart is when the backend went away, back when it was back.
	outageStart, back time.Time
	// fleet is the longest catch-up of a host from the backend's return,
	// median the median; the host that waited a day's Retry-After (capped)
	// is not in either.
	fleet, median time.Duration
	// retryAfterDay is that host's.
	retryAfterDay time.Duration
	// steadyRate, peakRate: remote-write requests a second the receivers
	// answered before the outage (1m) and at most during the catch-up (5s).
	steadyRate, peakRate float64
	// answered: requests by code over the catch-up, all receivers.
	answered map[string]float64
	// gateP99 is the 99th percentile of the wait at the receivers'
	// max_concurrency gate over the catch-up, gateWaited the share of
	// requests that waited there more than 10 ms.
	gateP99, gateWaited float64
	// limited is how many seconds of the catch-up the receivers answered
	// 429 in (the tenant's ingest limit).
	limited float64
}

// gateWait is the receivers' histogram of the wait at the write gate.
const gateWait = "thanos_receive_write_request_concurrent_gate_write_requests_duration_seconds"

// A host's data is fresh in the backend while its newest sample there is
// at most freshWithin old: a scrape every 5 s and merge_window's 2 s, and
// a short hold by the ingest limit. It has drained its queue once it has
// stayed fresh for freshFor.
const (
	freshWithin = 30 * time.Second
	freshFor    = 30 * time.Second
)

// requestRate is the receivers' remote-write request rate over a window.
const requestRate = `sum(rate(http_requests_total{handler="receive"}[%s]))`

// waitCatchUp waits until the backend holds every host's backlog of the
// outage (each host that reaches it) and its new data again, then reads
// the receivers' peak request rate and answers over the catch-up.
func waitCatchUp(ctx context.Context, t *testing.T, b *backend, f *fleet, o *outage, steadyRate float64) *catchUp {
	t.Helper()
	c := &catchUp{end: map[string]time.Time{}, drained: map[string]time.Time{}, steadyRate: steadyRate, outageStart: o.start, back: o.back}
	// The day's Retry-After host waits up to maxRetryAfter from its last 429.
	fresh := map[string]time.Time{}
	harness.Eventually(t, maxRetryAfter+3*time.Minute, "every host's backlog in the backend, and its new data for "+freshFor.String(), func() []string {
		newest, err := b.newestSamples(ctx)
		if err != nil {
			return []string{err.Error()}
		}
		now := time.Now()
		var problems []string
		for _, h := range f.regular() {
			if _, done := c.end[h.name]; !done && caughtUp(newest, h, o) {
				c.end[h.name] = now
			}
			switch {
			case now.Sub(newest[h.name]) > freshWithin:
				delete(fresh, h.name)
			case fresh[h.name].IsZero():
				fresh[h.name] = now
			}
			if _, done := c.end[h.name]; !done || fresh[h.name].IsZero() || now.Sub(fresh[h.name]) < freshFor {
				problems = append(problems, h.name+" still catching up")
			}
		}
		return problems
	})
	for name, at := range fresh {
		c.drained[name] = at
		c.lastDrained = maxTime(c.lastDrained, at)
	}
	var ds []time.Duration
	for _, h := range f.regular() {
		end := c.end[h.name]
		c.last = maxTime(c.last, end)
		if h == f.faults["retry-after-day"] {
			c.retryAfterDay = end.Sub(o.back)
		} else {
			ds = append(ds, end.Sub(o.back))
		}
	}
	slices.Sort(ds)
	c.fleet, c.median = ds[len(ds)-1], ds[len(ds)/2]
	// Over the whole catch-up, the drained queues' new data included; the
	// meta-monitoring Prometheus scrapes every second: let it see the end.
	at := maxTime(c.last, c.lastDrained).Add(3 * time.Second)
	time.Sleep(time.Until(at))
	window := at.Sub(o.back)
	peak, err := b.metaScalar(ctx, fmt.Sprintf("max_over_time(%s[%s:1s])", fmt.Sprintf(requestRate, "5s"), promDuration(window)), at)
	if err != nil {
		t.Fatal(err)
	}
	c.peakRate = peak
	if c.answered, err = b.answers(ctx, o.back, at); err != nil {
		t.Fatal(err)
	}
	w := promDuration(window)
	if c.limited, err = b.metaScalar(ctx, fmt.Sprintf(`count_over_time((sum(increase(http_requests_total{handler="receive",code="429"}[2s])) > 0)[%s:1s])`, w), at); err != nil {
		t.Fatal(err)
	}
	if c.gateP99, err = b.metaScalar(ctx, fmt.Sprintf(`histogram_quantile(0.99, sum by (le) (increase(%s_bucket[%s])))`, gateWait, w), at); err != nil {
		t.Fatal(err)
	}
	if c.gateWaited, err = b.metaScalar(ctx, fmt.Sprintf(`1 - sum(increase(%[1]s_bucket{le="0.01"}[%[2]s])) / sum(increase(%[1]s_count[%[2]s]))`, gateWait, w), at); err != nil {
		t.Fatal(err)
	}
	return c
}

// promDuration is d, rounded up to a second, in PromQL's syntax.
func promDuration(d time.Duration) string {
	return model.Duration(d.Truncate(time.Second) + time.Second).String()
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// check asserts what the catch-up must show: no request refused for its
// size (413), and the receivers met the tenant's ingest limit (429) without
// a host dropping anything for it (the samples check shows nothing lost).
func (c *catchUp) check(t *testing.T, f *fleet) {
	t.Helper()
	t.Logf("catch-up: every host delivered within %v of the backend's return (median %v; the host told to wait a day: %v); "+
		"receivers' requests %.0f/s at most (5s rate), %.1f/s before the outage; answers %v; at the max_concurrency gate (%d) %.1f%% waited over 10 ms, the 99th percentile %.3f s",
		c.fleet.Round(time.Second), c.median.Round(time.Second),
		c.retryAfterDay.Round(time.Second), c.peakRate, c.steadyRate, c.answered, maxConcurrency, 100*c.gateWaited, c.gateP99)
	t.Logf("catch-up: the backend held every host's new data within %v again (what the ingest limit held back included) %v after its return", freshWithin, c.lastDrained.Sub(c.back).Round(time.Second))
	// The backoff's shortest wait is 0.5 s: a host that backs off is
	// answered 429 at most twice a second.
	if per := c.answered["429"] / max(c.limited, 1) / float64(len(f.regular())); per > 2 {
		t.Errorf("%.0f requests answered 429 over %v s limited: %.2f a host a second, more than the backoff allows", c.answered["429"], c.limited, per)
	}
	t.Logf("catch-up: the ingest limit answered 429 for %v s; %.2f 429s a host a second while it did", c.limited, c.answered["429"]/max(c.limited, 1)/float64(len(f.regular())))
	if c.answered["413"] > 0 {
		t.Errorf("the receivers refused %.0f requests as too large (413) during the catch-up", c.answered["413"])
	}
	for _, h := range f.regular() {
		log := h.log()
		// The recovery is logged once the endpoint answers and once the
		// backlog is sent (docs/operations.md, Delivery).
		for _, msg := range []string{logRecovered, logDelivered} {
			if len(h.own(after(logLines(log, msg), c.outageStart))) == 0 {
				t.Errorf("%s: no line %q since the outage began", h.name, msg)
			}
		}
		for _, msg := range []string{logRejected, logDropped, logNotQueued} {
			if lines := logLines(log, msg); len(lines) > 0 {
				t.Errorf("%s: %d lines %q, e.g. %v", h.name, len(lines), msg, lines[0].fields)
			}
		}
	}
}

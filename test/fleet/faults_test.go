// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// skewedClock names the host whose clock runs an hour ahead.
const skewedClock = "clock-ahead"

// faultHost is a host that writes through a proxy: during the outage the
// proxy answers 429 with a Retry-After of its own (throttle), or, all the
// time, it shifts the host's timestamps (shift).
type faultHost struct {
	name       string
	throttle   bool
	retryAfter string
	// note is what the host's warning says of its Retry-After.
	note  string
	shift time.Duration
}

// faultHosts are the first hosts of the fleet. Retry-After: an HTTP date
// in the past (no wait: the backoff), a day in seconds (the exporter waits
// its 5-minute bound), and garbage (ignored: the backoff).
//
// A host's clock an hour off has no real form here: Linux time namespaces
// offset only CLOCK_MONOTONIC and CLOCK_BOOTTIME, never CLOCK_REALTIME;
// libfaketime's LD_PRELOAD does not reach a static Go binary, which reads
// the clock through the vDSO; and setting this machine's clock would move
// every process on it. The collector stamps each sample with its clock, so
// the backend sees exactly what the proxy makes of the host's requests:
// every timestamp an hour ahead.
var faultHosts = []faultHost{
	{name: "retry-after-past", throttle: true, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT", note: "is past; the backoff applies"},
	{name: "retry-after-day", throttle: true, retryAfter: "86400", note: "is beyond the cap; waits 5m0s"},
	{name: "retry-after-garbage", throttle: true, retryAfter: "soon", note: "is neither seconds nor an HTTP date; the backoff applies"},
	{name: skewedClock, shift: time.Hour},
}

// The exporter's bounds (config/prometheus-remote-write.yaml's
// retry_on_failure, its ±50 % jitter, and the exporter's cap on
// Retry-After).
const (
	minBackoff    = 500 * time.Millisecond
	maxBackoff    = 7500 * time.Millisecond
	maxRetryAfter = 5 * time.Minute
)

// prepare sets the proxy up for the whole run.
func (fh faultHost) prepare(p *harness.RemoteWriteProxy) {
	if fh.shift != 0 {
		p.Shift(fh.shift)
	}
}

// outageBegins and outageEnds throttle the proxy over the outage.
func (fh faultHost) outageBegins(p *harness.RemoteWriteProxy) {
	if fh.throttle {
		p.Throttle(fh.retryAfter)
	}
}

func (fh faultHost) outageEnds(p *harness.RemoteWriteProxy) {
	if fh.throttle {
		p.Forward()
	}
}

// checkFaultHosts checks each fault host against what its proxy saw and
// what it logged; o is the outage's timing.
func checkFaultHosts(t *testing.T, f *fleet, o *outage) {
	t.Helper()
	for _, fh := range faultHosts {
		h := f.faults[fh.name]
		reqs := h.proxy.Requests()
		log := h.log()
		if !h.proc().Running() {
			t.Errorf("%s: the collector exited:\n%s", h.name, harness.Tail(log, 4000))
		}
		switch {
		case fh.throttle:
			checkRetryAfter(t, h, fh, reqs, o)
		case fh.shift != 0:
			checkSkewedHost(t, h, reqs, o)
		}
	}
}

// checkRetryAfter: over the outage the host was answered 429 with the
// fault's Retry-After; it waited as the exporter's rules say, logged the
// 429 at most once a minute, and nothing else was lost (the samples check
// covers it with every other host).
func checkRetryAfter(t *testing.T, h *host, fh faultHost, reqs []harness.ProxiedRequest, o *outage) {
	t.Helper()
	// The proxy's own 429s; later ones are receive's, forwarded.
	var throttled []time.Time
	var next time.Time // the first request after the last of them
	for _, r := range reqs {
		switch {
		case r.Code == 429 && r.RetryAfter == fh.retryAfter:
			throttled, next = append(throttled, r.At), time.Time{}
		case len(throttled) > 0 && next.IsZero():
			next = r.At
		}
	}
	defer func() {
		if t.Failed() {
			t.Logf("%s: the proxy's requests: %v", h.name, reqs)
		}
	}()
	if len(throttled) == 0 || next.IsZero() {
		t.Errorf("%s: %d requests answered 429, then %v: the host did not write through the outage and after it", h.name, len(throttled), next)
		return
	}
	gaps := append(intervals(throttled), next.Sub(throttled[len(throttled)-1]))
	shortest, longest := minMax(gaps)
	t.Logf("%s: %d requests answered 429 (Retry-After %q) over the %v outage; waits between tries %v to %v",
		h.name, len(throttled), fh.retryAfter, o.length(), shortest.Round(time.Millisecond), longest.Round(time.Millisecond))
	switch fh.retryAfter {
	case "86400":
		// Waited what it asked, up to the exporter's bound.
		if shortest < maxRetryAfter-time.Second || longest > maxRetryAfter+10*time.Second {
			t.Errorf("%s: waits %v to %v after a Retry-After of a day, want the %v bound", h.name, shortest, longest, maxRetryAfter)
		}
	default:
		// A date in the past or garbage asks for no wait: the backoff.
		if shortest < minBackoff-100*time.Millisecond || longest > maxBackoff+2*time.Second {
			t.Errorf("%s: waits %v to %v after Retry-After %q, want the backoff's %v to %v", h.name, shortest, longest, fh.retryAfter, minBackoff, maxBackoff)
		}
	}
	lines := checkRateLimited(t, h, logFailed, "http 429", 1)
	if !slices.ContainsFunc(lines, func(l logLine) bool { return strings.Contains(l.field("error"), fh.note) }) {
		t.Errorf("%s: no warning says the Retry-After %s", h.name, fh.note)
	}
}

// checkSkewedHost: the receivers refuse every sample an hour ahead (409,
// receive's too-far-in-future window), the host drops those requests as
// the remote-write specification says (a 4xx is not retried), logs the
// rejection at most once a minute, and keeps running; the other hosts lose
// nothing (the samples check).
func checkSkewedHost(t *testing.T, h *host, reqs []harness.ProxiedRequest, o *outage) {
	t.Helper()
	codes := map[int]int{}
	for _, r := range reqs {
		codes[r.Code]++
	}
	t.Logf("%s: requests answered by code %v", h.name, codes)
	for code, n := range codes {
		if code/100 == 2 {
			t.Errorf("%s: %d requests an hour ahead were accepted (%d)", h.name, n, code)
		}
	}
	if codes[409] == 0 {
		t.Errorf("%s: no request refused with 409 (too far in the future): %v", h.name, codes)
	}
	checkRateLimited(t, h, logRejected, "http 409", 1)
	if n := len(logLines(h.log(), logFailed)); n > int(o.length()/time.Minute)+4 {
		t.Errorf("%s: %d lines of failed sends, more than one a minute of the outage", h.name, n)
	}
}

// checkRateLimited checks that h logged msg with the cause, and that no
// collector of h logged more than perMinute such lines within a minute
// (the limit is each process's).
func checkRateLimited(t *testing.T, h *host, msg, cause string, perMinute int) []logLine {
	t.Helper()
	var all []logLine
	most := 0
	for _, log := range h.logs() {
		var lines []logLine
		for _, l := range logLines(log, msg) {
			if l.field("cause") == cause {
				lines = append(lines, l)
			}
		}
		most = max(most, maxPerMinute(lines))
		all = append(all, lines...)
	}
	if len(all) == 0 {
		t.Errorf("%s: no line %q with cause %q:\n%s", h.name, msg, cause, harness.Tail(h.log(), 3000))
		return nil
	}
	if most > perMinute {
		t.Errorf("%s: %d lines %q (%s) within a minute, want at most %d", h.name, most, msg, cause, perMinute)
	}
	t.Logf("%s: %d lines %q (%s), e.g. %s: %s", h.name, len(all), msg, cause, all[0].field("error"), all[0].field("retry_in"))
	return all
}

// intervals is the time between consecutive times.
func intervals(at []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(at); i++ {
		out = append(out, at[i].Sub(at[i-1]))
	}
	return out
}

// minMax is the shortest and longest of ds (not empty).
func minMax(ds []time.Duration) (lo, hi time.Duration) {
	lo, hi = ds[0], ds[0]
	for _, d := range ds[1:] {
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

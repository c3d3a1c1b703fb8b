// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// outage is the timing of the backend's outage and of the receiver killed
// while the fleet caught up.
type outage struct {
	// start: every receiver stopped; back: every receiver ready again.
	start, back time.Time
	// killed: the receiver killed (SIGKILL) mid-catch-up, when, and when it
	// was ready again; catchingUp the hosts still catching up then.
	killed             *harness.ThanosReceiver
	killedAt, revived  time.Time
	catchingUpAtKill   int
	writingToKilled    int
	caughtUpBeforeKill int
}

// length is how long the backend was away.
func (o *outage) length() time.Duration { return o.back.Sub(o.start) }

// killWithin is how long after the backend's return a receiver is killed
// at the latest, and killedFor how long it stays away.
const (
	killWithin = 30 * time.Second
	killedFor  = 15 * time.Second
)

// runOutage stops every receiver (SIGTERM) for s.outage while the hosts
// go on scraping, throttles the fault hosts' proxies meanwhile, starts the
// receivers again on their TSDBs, and kills one receiver (SIGKILL) while
// the fleet catches up, starting it again after killedFor.
func runOutage(ctx context.Context, t *testing.T, s settings, b *backend, f *fleet) *outage {
	t.Helper()
	o := &outage{start: time.Now()}
	var wg sync.WaitGroup
	for _, r := range b.receivers {
		wg.Go(func() {
			if r.Proc.Stop(30 * time.Second) {
				t.Errorf("%s did not stop within 30s of SIGTERM", r.Name)
			}
		})
	}
	wg.Wait()
	for _, fh := range faultHosts {
		fh.outageBegins(f.faults[fh.name].proxy)
	}
	t.Logf("outage: every receiver stopped at %s; back in %v", o.start.UTC().Format(time.TimeOnly), s.outage)
	time.Sleep(time.Until(o.start.Add(s.outage)))

	for _, r := range b.receivers {
		r.Start()
	}
	for _, r := range b.receivers {
		r.WaitReady(2 * time.Minute)
	}
	o.back = time.Now()
	for _, fh := range faultHosts {
		fh.outageEnds(f.faults[fh.name].proxy)
	}
	t.Logf("outage: every receiver ready again at %s, after %v", o.back.UTC().Format(time.TimeOnly), o.length().Round(time.Second))

	// Killed as soon as a host writing to it is delivering its backlog.
	o.killed = b.receivers[1]
	var writers []*host
	for _, h := range f.regular() {
		if h.writeURL == o.killed.WriteURL() {
			writers = append(writers, h)
		}
	}
	for deadline := time.Now().Add(killWithin); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if slices.ContainsFunc(writers, func(h *host) bool { return len(h.own(after(logLines(h.log(), logRecovered), o.start))) > 0 }) {
			break
		}
	}
	o.writingToKilled = len(writers)
	newest, err := b.newestSamples(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range writers {
		if caughtUp(newest, h, o) {
			o.caughtUpBeforeKill++
		} else {
			o.catchingUpAtKill++
		}
	}
	o.killedAt = time.Now()
	if err := o.killed.Proc.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("catch-up: %s killed (SIGKILL) %v after the backend's return; of the %d hosts writing to it, %d were still catching up",
		o.killed.Name, o.killedAt.Sub(o.back).Round(time.Millisecond), o.writingToKilled, o.catchingUpAtKill)
	time.Sleep(killedFor)
	o.killed.Start()
	o.killed.WaitReady(2 * time.Minute)
	o.revived = time.Now()
	if o.catchingUpAtKill == 0 {
		t.Errorf("the kill came after every host writing to %s had caught up: it tested no catch-up", o.killed.Name)
	}
	return o
}

// caughtUp reports whether the backend holds h's samples up to the
// backend's return (newest: newestSamples): a host delivers in order, so
// it has then delivered its whole backlog of the outage.
func caughtUp(newest map[string]time.Time, h *host, o *outage) bool {
	// The last scrape before the return is at most 5 s before it.
	return !newest[h.name].Before(o.back.Add(-6 * time.Second))
}

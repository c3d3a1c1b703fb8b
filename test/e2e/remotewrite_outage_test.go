// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// TestRemoteWriteRemovedInstanceEnds: the series of an instance removed from
// the manifest end in Prometheus within about two scrapes plus the send
// delay, not after the five-minute lookback: the receiver flags them
// NoRecordedValue and remote write sends staleness markers.
func TestRemoteWriteRemovedInstanceEnds(t *testing.T) {
	t.Parallel()
	r, _ := startRemoteWrite(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, LIF: true, Seed: 9})
	ctx := context.Background()
	count := func(selector string) (float64, error) {
		v, err := r.prom.Vector(ctx, fmt.Sprintf("count(%s)", selector), time.Now())
		if err != nil || len(v) == 0 {
			return 0, err
		}
		return float64(v[0].Value), nil
	}
	var before float64
	eventually(t, waitTimeout, "instance 3's series in Prometheus", func() []string {
		n, err := count(`{__name__=~"ernic_.+",ernic_id="3"}`)
		up, _ := r.prom.ScalarAt(ctx, `ernic_instance_up{ernic_id="3"}`, time.Now())
		before = n
		if err != nil || n < 50 || up != 1 {
			return []string{fmt.Sprintf("%v series of instance 3 (%v), up %v", n, err, up)}
		}
		return nil
	})
	others, _ := count(`{__name__=~"ernic_.+",ernic_id!="3"}`)

	if err := r.sim.Remove(3); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	// Two scrapes, the batch timeout and a second for the queue, plus a
	// second of slack.
	limit := 2*rwInterval + 100*time.Millisecond + time.Second + time.Second
	var upGone, allGone time.Duration
	for time.Since(removed) < limit+10*time.Second && (upGone == 0 || allGone == 0) {
		now := time.Now()
		if upGone == 0 {
			if v, err := r.prom.Vector(ctx, `ernic_instance_up{ernic_id="3"}`, now); err == nil && len(v) == 0 {
				upGone = now.Sub(removed)
			}
		}
		if allGone == 0 {
			if n, err := count(`{__name__=~"ernic_.+",ernic_id="3"}`); err == nil && n == 0 {
				allGone = now.Sub(removed)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("instance 3 removed: ernic_instance_up{ernic_id=\"3\"} gone from instant queries after %v, all %v of its series after %v (limit %v)",
		upGone.Round(10*time.Millisecond), before, allGone.Round(10*time.Millisecond), limit)
	if upGone == 0 || upGone > limit {
		t.Errorf("ernic_instance_up{ernic_id=\"3\"} still answers %v after the instance left the manifest (gone after %v; limit %v): no staleness marker reached Prometheus",
			time.Since(removed).Round(time.Millisecond), upGone, limit)
	}
	if allGone == 0 || allGone > limit {
		t.Errorf("instance 3's series still answer %v after the instance left the manifest (gone after %v; limit %v)",
			time.Since(removed).Round(time.Millisecond), allGone, limit)
	}
	// The other instances' series stay.
	if n, err := count(`{__name__=~"ernic_.+",ernic_id!="3"}`); err != nil || n < others {
		t.Errorf("the other instances' series: %v (%v), were %v before the removal", n, err, others)
	}
	if v, err := r.prom.ScalarAt(ctx, "ernic_instances", time.Now()); err != nil || v != 2 {
		t.Errorf("ernic_instances = %v (%v) after the removal, want 2", v, err)
	}
}

// seriesGap is a hole in a series' samples.
type seriesGap struct {
	from, to time.Time
	missing  int
}

// gaps returns the holes longer than 1.5 intervals in samples, with the
// number of samples missing from each.
func gaps(samples []model.SamplePair, interval time.Duration) []seriesGap {
	var out []seriesGap
	for i := 1; i < len(samples); i++ {
		d := samples[i].Timestamp.Sub(samples[i-1].Timestamp)
		if d > interval*3/2 {
			out = append(out, seriesGap{samples[i-1].Timestamp.Time(), samples[i].Timestamp.Time(),
				int(math.Round(float64(d)/float64(interval))) - 1})
		}
	}
	return out
}

// TestRemoteWriteOutage: the collector starts on a damaged queue file,
// which it sets aside. Prometheus is down for over a minute; during the
// outage the collector is killed (SIGKILL) and started again on the same
// state directory; then Prometheus comes back on the same TSDB. Once the
// queue has drained, every series has a sample for every scrape
// of the window, except the scrapes the collector could not do while it was
// restarting.
func TestRemoteWriteOutage(t *testing.T) {
	t.Parallel()
	r := newRemoteWrite(t, sim.Options{Instances: 3, QPs: 2, Interval: 500 * time.Millisecond, LIF: true, Seed: 13})
	damaged := damageQueue(t, r.stateDir, "remote_write")
	started := time.Now()
	c := r.startCollector()
	ctx := context.Background()

	var qp string
	eventually(t, waitTimeout, "data in Prometheus", func() []string {
		v, err := r.prom.Vector(ctx, `ernic_qp_bytes_sent_total{ernic_id="3"}`, time.Now())
		if err != nil || len(v) == 0 {
			return []string{fmt.Sprintf("no QP series of instance 3 yet (%v)", err)}
		}
		qp = string(v[0].Metric["qp"])
		return nil
	})
	t.Logf("QP series in Prometheus %v after the start on a damaged queue file", time.Since(started).Round(10*time.Millisecond))
	checkSetAside(t, damaged, c.Log.String())
	time.Sleep(6 * rwInterval)

	// The outage: 65s without Prometheus, the collector killed after 25s.
	const outage = 65 * time.Second
	down := time.Now()
	r.prom.Stop()
	time.Sleep(25 * time.Second)
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	r.startCollector()
	restarted := time.Now()
	time.Sleep(time.Until(down.Add(outage)))
	// The queue on disk holds the outage's scrapes.
	var walBytes int64
	walFiles, _ := filepath.Glob(filepath.Join(r.stateDir, "queue", "*"))
	for _, f := range walFiles {
		if fi, err := os.Stat(f); err == nil {
			walBytes += fi.Size()
		}
	}
	r.prom.Start()
	up := time.Now()
	t.Logf("Prometheus down %v; collector killed %v into the outage, started again %v later; queue at the end of the outage: %d files, %d bytes",
		up.Sub(down).Round(time.Millisecond), killed.Sub(down).Round(time.Millisecond), restarted.Sub(killed).Round(time.Millisecond), len(walFiles), walBytes)
	if walBytes == 0 {
		t.Errorf("the queue in %s is empty at the end of the outage", r.stateDir)
	}

	// Drained: the newest sample is recent again.
	eventually(t, 60*time.Second, "the backlog in Prometheus", func() []string {
		v, err := r.prom.Vector(ctx, `timestamp(ernic_stats_writes_total{ernic_id="2"})`, time.Now())
		if err != nil || len(v) != 1 {
			return []string{fmt.Sprintf("%v %v", v, err)}
		}
		if age := time.Since(time.Unix(int64(v[0].Value), 0)); age > 3*time.Second {
			return []string{fmt.Sprintf("newest sample %v old", age)}
		}
		return nil
	})
	drained := time.Now()
	t.Logf("backlog drained %v after Prometheus came back", drained.Sub(up).Round(time.Millisecond))
	time.Sleep(3 * rwInterval)

	// The window: from 5s before the outage (the collector had sent for at
	// least 6s then) to 2s before the drain was seen.
	end := drained.Add(-2 * time.Second).Truncate(time.Second)
	window := end.Sub(down.Add(-5 * time.Second).Truncate(time.Second))
	ws := fmt.Sprintf("%ds", int(window.Seconds()))
	expected := int(window / rwInterval)
	series := []string{
		`ernic_stats_writes_total{ernic_id="2"}`,
		fmt.Sprintf(`ernic_qp_bytes_sent_total{ernic_id="3",qp=%q}`, qp),
		`ernic_lif_counter_total{ernic_id="2",counter="rx_ucast_bytes"}`,
		`ernic_instance_up{ernic_id="1"}`,
		`ernic_instances`,
	}
	for _, sel := range series {
		n, err := r.prom.ScalarAt(ctx, fmt.Sprintf("count_over_time(%s[%s])", sel, ws), end)
		if err != nil {
			t.Errorf("%s: %v", sel, err)
			continue
		}
		m, err := r.prom.RawSamples(ctx, sel, window, end)
		if err != nil {
			t.Fatal(err)
		}
		raw := rawOf(t, m, sel)
		var atKill, elsewhere int
		var holes []string
		for _, g := range gaps(raw, rwInterval) {
			holes = append(holes, fmt.Sprintf("%s..%s (%d missing)", g.from.Format("15:04:05.000"), g.to.Format("15:04:05.000"), g.missing))
			// The restart's hole: from the last scrape before the kill to
			// the first of the new process (initial_delay 1s).
			if !g.from.After(killed) && g.from.After(killed.Add(-2*rwInterval)) && g.to.Before(restarted.Add(4*rwInterval)) {
				atKill += g.missing
			} else {
				elsewhere += g.missing
			}
		}
		var aroundKill []string
		for _, sp := range raw {
			if at := sp.Timestamp.Time(); at.After(killed.Add(-3*rwInterval)) && at.Before(restarted.Add(4*rwInterval)) {
				aroundKill = append(aroundKill, at.Format("15:04:05.000"))
			}
		}
		t.Logf("%s over %s: expected %d samples (window / %v), received %d (count_over_time %v); missing at the kill and restart %d, elsewhere %d; holes: %v; samples around the kill at %s: %v",
			sel, ws, expected, rwInterval, len(raw), n, atKill, elsewhere, holes, killed.Format("15:04:05.000"), aroundKill)
		if int(n) != len(raw) {
			t.Errorf("%s: count_over_time %v but %d raw samples", sel, n, len(raw))
		}
		// The restart costs the scrapes of the collector's start-up (about
		// 0.5s) and the receiver's initial_delay (1s): at most 4. Nothing
		// else may be lost: 1 sample of slack at the edges of the window.
		if atKill > 4 {
			t.Errorf("%s: %d samples missing at the kill and restart, want at most 4", sel, atKill)
		}
		if elsewhere > 0 || len(raw)+atKill < expected-1 {
			t.Errorf("%s: %d samples received + %d lost at the restart, expected %d (±1): %d lost during the outage",
				sel, len(raw), atKill, expected, expected-len(raw)-atKill)
		}
	}
}

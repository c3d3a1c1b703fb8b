// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// steadyFor is how long the fleet runs before the outage: the steady
// rates the ingest limit and the report start from.
const steadyFor = time.Minute

// TestFleetOutageAndUpgrade: FLEET_HOSTS (100) collectors, the real
// build, each with a host name of its own (unshare --uts) on its own
// simulated run directory, push with config/prometheus-remote-write.yaml
// and config/fleet.yaml, as tenant gpu-fleet, into three Thanos receivers
// (one hashring, replication factor 2, the tenant's limits), read through
// Thanos query, with a Thanos ruler evaluating the shipped rules through
// the querier. Then:
//   - every receiver stops for FLEET_OUTAGE (4m) and comes back; a
//     receiver is killed (SIGKILL) while the fleet catches up and comes
//     back 15 s later. Every host delivers its backlog; the catch-up time
//     and the receivers' peak request rate are measured; the tenant's
//     ingest limit answers 429 during the catch-up and no request is
//     refused for its size or dropped;
//   - three hosts are answered 429 over the outage with a Retry-After in
//     the past, of a day, and of garbage, and wait as the exporter's rules
//     say, logging it at most once a minute; one host's samples come an
//     hour ahead: the receivers refuse them (409), it logs that at most
//     once a minute, and no other host loses anything;
//   - every host is upgraded to another build, ten at a time, as a package
//     upgrade does it;
//   - every sample of every host (but the one an hour ahead) in the
//     reference, a Prometheus every host also writes to, is in Thanos with
//     its value, its delivery telemetry included: 0 lost; each host's
//     backlog rises over the outage and falls after it, and its version
//     follows the upgrade, in the backend; the ruler's silence and
//     delivery alerts fire and resolve with the outage and the catch-up,
//     no loss alert fires; the collectors' CPU and memory are reported.
func TestFleetOutageAndUpgrade(t *testing.T) {
	harness.RequireRoot(t, "give each host a host name of its own (unshare --uts)")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	s := loadSettings(t)
	b := startBackend(ctx, t, s)
	watch := watchRuler(ctx, b)
	f := startFleet(t, s, b)
	u := newUsage()

	perHost := f.waitSeries(ctx, t, b, 3*time.Minute)
	waitRulerQuiet(ctx, t, b)
	from := time.Now()
	t.Logf("%d hosts up in %v, %d series a host through the querier", len(f.hosts), from.Sub(began).Round(time.Second), perHost)
	u.recordAll(t, "steady", f)
	time.Sleep(steadyFor)
	u.recordAll(t, "outage start", f)
	steadyIngest, err := b.metaScalar(ctx, fmt.Sprintf(`sum(rate(prometheus_tsdb_head_samples_appended_total{tenant=%q}[%s]))`, tenant, promDuration(steadyFor-5*time.Second)), time.Now())
	if err != nil || steadyIngest == 0 {
		t.Fatalf("the tenant's steady ingest rate: %v (%v)", steadyIngest, err)
	}
	steadyRequests, err := b.metaScalar(ctx, fmt.Sprintf(requestRate, promDuration(steadyFor-5*time.Second)), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.setIngestLimit(ctx, t, uint64(ingestLimitFactor*steadyIngest))
	t.Logf("steady: the receivers append %.0f samples/s of the tenant (both replicas), %.1f requests/s; ingest limit set to %.0f samples/s",
		steadyIngest, steadyRequests, ingestLimitFactor*steadyIngest)

	o := runOutage(ctx, t, s, b, f)
	u.recordAll(t, "backend back", f)
	c := waitCatchUp(ctx, t, b, f, o, steadyRequests)
	u.recordAll(t, "caught up", f)
	c.check(t, f)

	time.Sleep(30 * time.Second) // settled: what the hosts send now is new
	up := rollingUpgrade(t, s, f, u)
	f.waitSeries(ctx, t, b, 2*time.Minute)
	u.recordAll(t, "upgraded", f)
	time.Sleep(30 * time.Second)
	u.recordAll(t, "end", f)

	to := time.Now().Add(-15 * time.Second)
	l := checkNoLoss(ctx, t, b, f, from, to)
	answered, err := b.answers(ctx, from, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if answered["413"] > 0 || answered["429"] == 0 {
		t.Errorf("the receivers answered %v: want no request refused for its size (413), and the tenant's ingest limit met (429) without a sample lost", answered)
	}
	checkFaultHosts(t, f, o)
	checkSilenceAlerts(ctx, t, watch, b, f, o, c, from)
	checkDeliveryAlerts(ctx, t, watch, b, f, o, c, from)
	checkBacklogRecord(ctx, t, b, f, o, c, perHost)
	checkVersionRecord(ctx, t, s, b, f, up, from, to)
	u.report(t, len(f.hosts), [2]string{"steady", "outage start"}, [2]string{"outage start", "backend back"},
		[2]string{"backend back", "caught up"}, [2]string{"caught up", "old collector at its stop"}, [2]string{"upgraded", "end"})
	t.Logf("fleet: %d hosts; outage %v; catch-up %v (median %v); receivers' peak %.0f requests/s (steady %.1f); answers %v; %d samples, %d lost; upgrade %v; test %v",
		len(f.hosts), o.length().Round(time.Second), c.fleet.Round(time.Second), c.median.Round(time.Second), c.peakRate, c.steadyRate,
		answered, l.samples, l.lost, up.end.Sub(up.start).Round(time.Second), time.Since(began).Round(time.Second))
}

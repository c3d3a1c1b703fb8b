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

// The hosts' delivery telemetry (the selftelemetry receiver, every 15 s)
// as the backend holds it, through the querier: each host's record of the
// outage arrives after it, with its own times.

// telemetryEvery is the selftelemetry receiver's interval.
const telemetryEvery = 15 * time.Second

// hostSeries returns the raw samples of the metric of host h from `from`
// to `to` through the querier, by the value of label (one series each).
func hostSeries(ctx context.Context, b *backend, metric, matchers string, h *host, label model.LabelName, from, to time.Time) (map[string][]model.SamplePair, error) {
	sel := fmt.Sprintf(`%s{instance=%q%s}`, metric, h.name, matchers)
	m, err := harness.ThanosRaw(ctx, b.query, sel, to.Sub(from), to, true)
	if err != nil {
		return nil, err
	}
	out := map[string][]model.SamplePair{}
	for _, ss := range m {
		out[string(ss.Metric[label])] = append(out[string(ss.Metric[label])], ss.Values...)
	}
	return out, nil
}

// checkBacklogRecord: for every host that reaches the backend, its
// remote_write backlog (otelcol_delivery_queue_points) in the backend rose
// over the outage to about the points it scraped meanwhile, and was back to
// about nothing (what freshWithin's scrapes hold) once the backend held its
// new data again.
func checkBacklogRecord(ctx context.Context, t *testing.T, b *backend, f *fleet, o *outage, c *catchUp, perHost int) {
	t.Helper()
	// At least 80 % of what the outage's scrapes (every 5 s) hold.
	least := 0.8 * float64(o.length()/(5*time.Second)) * float64(perHost)
	var peaks []float64
	for _, h := range f.regular() {
		end := c.drained[h.name].Add(2 * telemetryEvery)
		got, err := hostSeries(ctx, b, "otelcol_delivery_queue_points", `, exporter="remote_write"`, h, "exporter", o.start.Add(-time.Minute), end)
		if err != nil {
			t.Fatal(err)
		}
		var peak, first, last float64
		var during int
		for _, p := range got["remote_write"] {
			at, v := p.Timestamp.Time(), float64(p.Value)
			if !at.Before(o.start) && !at.After(o.back) {
				if during == 0 {
					first = v
				}
				during++
				peak = max(peak, v)
			}
			last = v
		}
		peaks = append(peaks, peak)
		switch {
		case during < int(o.length()/telemetryEvery)/2:
			t.Errorf("%s: %d samples of its backlog from the %v outage in the backend, want about %d", h.name, during, o.length().Round(time.Second), o.length()/telemetryEvery)
		case peak < least || peak <= first:
			t.Errorf("%s: its backlog in the backend rose from %v to %v over the outage, want it to rise to at least %.0f points", h.name, first, peak, least)
		case last > float64(freshWithin/(5*time.Second))*float64(perHost):
			t.Errorf("%s: its backlog in the backend is %v points %v after its new data was there again, want about none; %s",
				h.name, last, 2*telemetryEvery, lagRecord(ctx, b, h.name, o.back, end))
		}
	}
	slices.Sort(peaks)
	if len(peaks) > 0 {
		t.Logf("backlog record: every host's remote_write backlog rose over the outage to %.0f to %.0f points (median %.0f; %.0f expected from the scrapes) and fell to about none once its new data was in the backend again",
			peaks[0], peaks[len(peaks)-1], peaks[len(peaks)/2], float64(o.length()/(5*time.Second))*float64(perHost))
	}
}

// checkVersionRecord: every host's otelcol_build_info in the backend has
// the old version up to its upgrade and the new one after it, no other.
func checkVersionRecord(ctx context.Context, t *testing.T, s settings, b *backend, f *fleet, up *upgrade, from, to time.Time) {
	t.Helper()
	for _, h := range f.regular() {
		got, err := hostSeries(ctx, b, "otelcol_build_info", "", h, "version", from, to)
		if err != nil {
			t.Fatal(err)
		}
		oldV, newV := got[s.collectorVersion], got[s.upgradeVersion]
		exited := up.exited[h.name]
		switch {
		case len(got) != 2 || len(oldV) == 0 || len(newV) == 0:
			t.Errorf("%s: otelcol_build_info versions %v, want %s then %s", h.name, keys(got), s.collectorVersion, s.upgradeVersion)
		case oldV[len(oldV)-1].Timestamp.Time().After(exited) || newV[0].Timestamp.Time().Before(exited):
			t.Errorf("%s: %s until %s, %s from %s; the old collector had exited at %s", h.name,
				s.collectorVersion, oldV[len(oldV)-1].Timestamp.Time().UTC().Format(time.StampMilli),
				s.upgradeVersion, newV[0].Timestamp.Time().UTC().Format(time.StampMilli), exited.UTC().Format(time.StampMilli))
		}
	}
	t.Logf("version record: every host's otelcol_build_info has version %s up to its upgrade and %s after it", s.collectorVersion, s.upgradeVersion)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package switchtest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// window is a time span in which one of the exporters served.
type window struct {
	who      string
	from, to time.Time
}

// rateInterval is Grafana's $__rate_interval for a 5 s scrape: four
// scrapes.
const rateInterval = "20s"

// checkSeriesContinue: the same ernic_ series (names and every label) in
// each window, no counter reset over all of them, and the dashboard's
// rate() panels with a value for every series at every step.
func checkSeriesContinue(t *testing.T, p *harness.Prometheus, repo string, ws []window) {
	t.Helper()
	selector := fmt.Sprintf(`{__name__=~"ernic_.+", job=%q}`, job)
	first := seriesIn(t, p, selector, ws[0].from, ws[0].to)
	if len(first) < 50 {
		t.Fatalf("%s: %d ernic_ series, want the simulator's (3 instances of 2 QPs)", ws[0].who, len(first))
	}
	for _, w := range ws[1:] {
		got := seriesIn(t, p, selector, w.from, w.to)
		if gone, added := diff(first, got, 5), diff(got, first, 5); len(gone) > 0 || len(added) > 0 {
			t.Errorf("%s: %d series, %s: %d; only before: %v; only after: %v", ws[0].who, len(first), w.who, len(got), gone, added)
		}
	}
	t.Logf("%d ernic_ series, the same names and labels from each exporter", len(first))

	from, to := ws[0].from, ws[len(ws)-1].to
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rng := fmt.Sprintf("%ds", int(to.Sub(from).Seconds()))
	// resets() per counter family: it drops the name, so one query over
	// all families would mix their series.
	families := map[string]bool{}
	for _, s := range first {
		if name, _, _ := strings.Cut(s, "{"); strings.HasSuffix(name, "_total") {
			families[name] = true
		}
	}
	counters := 0
	for name := range families {
		resets, err := p.Vector(ctx, fmt.Sprintf(`resets(%s{job=%q}[%s])`, name, job, rng), to)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range resets {
			counters++
			if s.Value != 0 {
				t.Errorf("%s%v: %v resets over the switch and the rollback, want none", name, s.Metric, s.Value)
			}
		}
	}
	if len(families) < 10 || counters == 0 {
		t.Fatalf("%d counter families, %d series to check for resets: want the simulator's", len(families), counters)
	}
	// The simulator's stats writes go on all along: an increase proves the
	// counters were read, not only present.
	inc, err := p.ScalarAt(ctx, fmt.Sprintf(`sum(increase(ernic_stats_writes_total{job=%q}[%s]))`, job, rng), to)
	if err != nil || inc <= 0 {
		t.Errorf("increase of ernic_stats_writes_total over the test: %v (%v), want above 0", inc, err)
	}
	t.Logf("%d counter series of %d families, no reset over %s; ernic_stats_writes_total increased by %.0f", counters, len(families), rng, inc)

	checkDashboardRates(ctx, t, p, repo, from.Add(30*time.Second), to)
}

// checkDashboardRates evaluates the dashboard's rate() panels of ernic_
// counters over [from, to] as Grafana would at a 5 s step: each series
// they return has a value at every step, across the switch and the
// rollback. (Filters such as "> 0" and topk() choose their series by
// value, and are left out.)
func checkDashboardRates(ctx context.Context, t *testing.T, p *harness.Prometheus, repo string, from, to time.Time) {
	t.Helper()
	d, err := dashboards.LoadDashboard(filepath.Join(repo, dashboards.DashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	step := scrapeInterval
	steps := int(to.Sub(from)/step) + 1
	checked := 0
	for _, q := range d.Queries {
		e := strings.TrimSpace(q.Expr)
		if q.Kind != dashboards.Target || !(strings.HasPrefix(e, "rate(ernic_") || strings.HasPrefix(e, "sum without (qp) (rate(ernic_")) ||
			strings.Contains(e, ">") || strings.Contains(e, " / ") {
			continue
		}
		expr, err := dashboards.Substitute(e, dashboards.Vars{RateInterval: rateInterval, Interval: "5s", Range: "5m"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.QueryRange(ctx, expr, from, to, step)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 {
			t.Errorf("%s: %s: no series", q.Where, expr)
		}
		for _, s := range m {
			if len(s.Values) != steps {
				t.Errorf("%s: %v: values at %d of %d steps of %v", q.Where, s.Metric, len(s.Values), steps, step)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("%d rate() panels of ernic_ counters in the dashboard, want the dozen or so it has", checked)
	}
	t.Logf("%d rate() queries of the dashboard: every series at every step of %v", checked, step)
}

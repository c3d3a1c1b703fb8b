// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// checkFleetDashboard runs every query of the dashboard but the VM row's
// against backend b with the host variable set to one host (only that
// host's series) and to All (every host's); a query of the push
// exporters' delivery series may be empty on a scraped backend. The fleet's run directories
// are static, so a trailing "> 0" on a rate or increase is run as ">= 0":
// that still proves the selectors, which is what the host variable changes.
func checkFleetDashboard(ctx context.Context, t *testing.T, board *dashboards.Dashboard, b fleetBackend, hosts []*fleetHost) {
	t.Helper()
	all := map[string]bool{}
	for _, h := range hosts {
		all[b.instance(h)] = true
	}
	one := b.instance(hosts[0])
	names, err := dashboards.LoadNames(dashboards.MetadataPaths(harness.RepoRoot(t))...)
	if err != nil {
		t.Fatal(err)
	}
	vars := dashboards.Vars{RateInterval: "6s", Interval: "2s", Range: "1m"}
	results := map[string]int{}
	for _, q := range board.Queries {
		if dashboards.GuestQuery(q) {
			continue
		}
		run := func(host string) map[string]bool {
			v := vars
			v.Host = host
			expr, err := dashboards.Substitute(staticFilter(q.Expr), v)
			if err != nil {
				t.Fatalf("%s: %v", q.Where, err)
			}
			res, err := b.p.Vector(ctx, expr, time.Now())
			if err != nil {
				t.Errorf("%s, %s: %v\n%s", b.name, q.Where, err, expr)
				return nil
			}
			seen := map[string]bool{}
			for _, s := range res {
				if in, ok := s.Metric["instance"]; ok {
					seen[string(in)] = true
				}
			}
			if host != "" {
				results[q.Where] = len(res)
			}
			return seen
		}
		if q.Panel == "host" {
			continue // the host variable lists every host
		}
		// Grafana writes a chosen value as a regular expression, its
		// special characters escaped, inside a PromQL string.
		filtered := run(strings.ReplaceAll(regexp.QuoteMeta(one), `\`, `\\`))
		pushOnly := b.scraped && len(names.PushOnlyRefs(q.Expr)) > 0
		if results[q.Where] == 0 && !emptyOnStaticData[q.Where] && !pushOnly {
			t.Errorf("%s, %s with host %s: no series", b.name, q.Where, one)
		}
		if extra := slices.DeleteFunc(slices.Collect(maps.Keys(filtered)), func(s string) bool { return s == one }); len(extra) > 0 {
			t.Errorf("%s, %s with host %s: series of %v too", b.name, q.Where, one, extra)
		}
		if everyone := run(""); len(everyone) > 0 && !maps.Equal(everyone, all) {
			t.Errorf("%s, %s with All: series of %v, want every host %v", b.name, q.Where, slices.Sorted(maps.Keys(everyone)), slices.Sorted(maps.Keys(all)))
		}
	}
	var lines []string
	for _, where := range slices.Sorted(maps.Keys(results)) {
		lines = append(lines, fmt.Sprintf("%s: %d", where, results[where]))
	}
	t.Logf("%s, host %s, series per dashboard query:\n  %s", b.name, one, strings.Join(lines, "\n  "))
}

// reloadRules makes the Prometheus p read its rule files again (SIGHUP) and waits
// until n alerting rules are loaded and evaluated.
func reloadRules(ctx context.Context, t *testing.T, p *harness.Prometheus, n int) {
	t.Helper()
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the rules loaded and evaluated", func() []string {
		var data struct {
			Groups []struct {
				Rules []struct {
					Name, Health string
				} `json:"rules"`
			} `json:"groups"`
		}
		if err := p.GetAPI(ctx, "/api/v1/rules", &data); err != nil {
			return []string{err.Error()}
		}
		var ok []string
		for _, g := range data.Groups {
			for _, r := range g.Rules {
				if r.Health == "ok" {
					ok = append(ok, r.Name)
				}
			}
		}
		if len(ok) != n {
			return []string{fmt.Sprintf("%d of %d rules evaluated ok: %v", len(ok), n, ok)}
		}
		return nil
	})
}

// movedFilter is the trailing filter of a query that keeps only series
// that moved.
var movedFilter = regexp.MustCompile(`\)\s*>\s*0\s*$`)

// staticFilter returns expr with a trailing "> 0" filter made ">= 0", for
// the static run directories of the fleet (checkFleetDashboard).
func staticFilter(expr string) string {
	return movedFilter.ReplaceAllString(expr, ") >= 0")
}

// emptyOnStaticData are the queries that may return nothing for a host of
// the fleet, and why: the server-start annotation needs an uptime under a
// minute in the range, and the fleet's servers may be older by then.
var emptyOnStaticData = map[string]bool{
	`annotation "Server starts"`: true,
}

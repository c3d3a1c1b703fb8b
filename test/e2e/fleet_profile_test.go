// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestFleetProfileDashboard: config/prometheus-remote-write.yaml with
// config/fleet.yaml after it. The backend gets the per-instance series and
// no per-QP one; the local endpoint serves every per-QP family; the panels
// that return nothing from the backend are exactly those whose description
// says where the per-QP detail is, so that a panel that silently needs
// per-QP series fails here.
func TestFleetProfileDashboard(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := harness.RepoRoot(t)
	harness.CollectorBinary(t)
	board, _, _ := loadBoardAndRules(t)
	names, err := dashboards.LoadNames(dashboards.MetadataPaths(root)...)
	if err != nil {
		t.Fatal(err)
	}

	rw := harness.StartRemoteWritePrometheus(t, "", "1d")
	runDir := t.TempDir()
	s, err := sim.New(sim.Options{RunDir: runDir, Instances: 3, QPs: 3, Interval: 200 * time.Millisecond, LIF: true, Seed: 17, Writes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	const host = "gpu-fleet-profile"
	localPort := harness.FreePort(t)
	// fleetOverride scrapes every second and turns the per-opcode metric on
	// for the local endpoint; the fleet receiver needs the interval too
	// (the overlay's receivers are separate) and keeps the metric off.
	col := startHostCollector(t, host, []string{
		"ERNIC_RUN_DIR=" + runDir, "ERNIC_REMOTE_WRITE_URL=" + rw.WriteURL(), "ERNIC_STATE_DIR=" + t.TempDir(),
		fmt.Sprintf("ERNIC_EXPORTER_PORT=%d", localPort),
	}, filepath.Join(root, "config", "prometheus-remote-write.yaml"), filepath.Join(root, dashboards.FleetPath),
		harness.WriteFile(t, "fleet-profile.yaml", fleetOverride+"  ernic/fleet:\n    collection_interval: 1s\n"))

	// The local endpoint serves every per-QP family.
	perQP := slices.Sorted(maps.Keys(names.PerQP))
	eventually(t, waitTimeout, "every per-QP family on the local endpoint", func() []string {
		mfs, err := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", localPort))
		if err != nil {
			return []string{err.Error()}
		}
		var missing []string
		for _, f := range mfs {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "host_name" {
						return []string{"a host_name label on the local endpoint (config/local.yaml has none): " + f.GetName()}
					}
				}
			}
		}
		for _, m := range perQP {
			if f, ok := mfs[m]; !ok || len(f.GetMetric()) == 0 {
				missing = append(missing, m)
			}
		}
		return missing
	})
	// The dashboard's rates need a few samples.
	eventually(t, waitTimeout, "4 samples within 6s", func() []string {
		v, err := rw.Vector(ctx, `count_over_time(ernic_instances[6s]) >= 4`, time.Now())
		if err != nil || len(v) != 1 {
			return []string{fmt.Sprintf("%d hosts (%v)", len(v), err)}
		}
		return nil
	})

	// The backend: per-instance QP gauges, no per-QP family at all.
	if v, err := rw.Vector(ctx, fmt.Sprintf(`ernic_qp_count{instance=%q}`, host), time.Now()); err != nil || len(v) != 3 {
		t.Errorf("ernic_qp_count of %s in the backend: %d series (%v), want one per instance, 3", host, len(v), err)
	}
	pushedPerQP, err := rw.Vector(ctx, fmt.Sprintf(`count by (__name__) ({__name__=~%q})`, strings.Join(perQP, "|")), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range pushedPerQP {
		t.Errorf("the fleet profile pushed %d series of %s", int(s.Value), s.Metric["__name__"])
	}

	// Every query of the dashboard but the VM row's and the host variable's.
	vars := dashboards.Vars{RateInterval: "6s", Interval: "2s", Range: "1m", Host: strings.ReplaceAll(regexp.QuoteMeta(host), `\`, `\\`)}
	results := map[string]int{}
	panelSeries := map[string]int{}
	for _, q := range board.Queries {
		if dashboards.GuestQuery(q) || q.Panel == "host" {
			continue
		}
		expr, err := dashboards.Substitute(staticFilter(q.Expr), vars)
		if err != nil {
			t.Fatalf("%s: %v", q.Where, err)
		}
		res, err := rw.Vector(ctx, expr, time.Now())
		if err != nil {
			t.Errorf("%s: %v\n%s", q.Where, err, expr)
			continue
		}
		results[q.Where] = len(res)
		if q.Kind == dashboards.Target {
			panelSeries[q.Panel] += len(res)
		}
		needsPerQP := len(names.PerQPRefs(q.Expr)) > 0
		switch {
		case needsPerQP && len(res) > 0:
			t.Errorf("%s queries %v, which the fleet profile does not push, and returned %d series", q.Where, names.PerQPRefs(q.Expr), len(res))
		case !needsPerQP && len(res) == 0 && !emptyOnStaticData[q.Where]:
			t.Errorf("%s returned nothing under the fleet profile:\n%s", q.Where, expr)
		}
	}
	var empty, noted []string
	for _, p := range board.Panels {
		if n, ok := panelSeries[p.Title]; ok && n == 0 {
			empty = append(empty, p.Title)
		}
		if strings.Contains(p.Description, dashboards.FleetNote) {
			noted = append(noted, p.Title)
		}
	}
	slices.Sort(empty)
	slices.Sort(noted)
	if len(noted) == 0 || !slices.Equal(empty, noted) {
		t.Errorf("panels without data under the fleet profile: %v\npanels whose description says the per-QP detail is on the hosts: %v", empty, noted)
	}
	if strings.Contains(col.Log.String(), "Exporting failed") {
		t.Errorf("the collector failed to export:\n%s", col.Log.String())
	}
	var lines []string
	for _, where := range slices.Sorted(maps.Keys(results)) {
		lines = append(lines, fmt.Sprintf("%s: %d", where, results[where]))
	}
	t.Logf("panels without data: %v\nseries per dashboard query:\n  %s", empty, strings.Join(lines, "\n  "))
}

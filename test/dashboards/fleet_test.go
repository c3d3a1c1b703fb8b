// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The fleet profile's push receiver turns off exactly the per-QP metrics,
// the receiver's metrics with a qp attribute: a new per-QP metric must be
// added to its list (or every host would push it), and no per-instance one
// may be on it (ernic.qp.count and ernic.qp.unpublished stay pushed).
func TestFleetProfileTurnsOffThePerQPMetrics(t *testing.T) {
	_, _, names := loadAll(t)
	dropped, err := FleetDisabled(filepath.Join(root(t), FleetPath))
	if err != nil {
		t.Fatal(err)
	}
	var perQP []string
	for prom := range names.PerQP {
		perQP = append(perQP, names.Metrics[prom])
	}
	if len(perQP) < 9 {
		t.Fatalf("metadata.yaml: %d metrics with a qp attribute, want at least 9: %v", len(perQP), perQP)
	}
	slices.Sort(perQP)
	slices.Sort(dropped)
	if !slices.Equal(dropped, perQP) {
		t.Errorf("%s: %s turns off %v\nthe metrics with a qp attribute are %v", FleetPath, FleetReceiver, dropped, perQP)
	}
	for _, keep := range []string{"ernic.qp.count", "ernic.qp.unpublished"} {
		if slices.Contains(dropped, keep) {
			t.Errorf("%s: %s turns off %s, a per-instance metric", FleetPath, FleetReceiver, keep)
		}
	}
}

// Every panel that queries a per-QP metric says where that detail is when
// the fleet profile leaves it on the hosts, and no other panel says so.
func TestPerQPPanelsSayWhereTheDetailIs(t *testing.T) {
	d, _, names := loadAll(t)
	perQPPanels := map[string]bool{}
	for _, q := range d.Queries {
		if q.Kind == Target && len(names.PerQPRefs(q.Expr)) > 0 {
			perQPPanels[q.Panel] = true
		}
	}
	if len(perQPPanels) < 3 {
		t.Fatalf("%d panels query per-QP metrics, want at least 3 (Top QPs by rate, QPs, ...): %v", len(perQPPanels), slices.Sorted(maps.Keys(perQPPanels)))
	}
	for _, p := range d.Panels {
		has := strings.Contains(p.Description, FleetNote)
		switch {
		case perQPPanels[p.Title] && !has:
			t.Errorf("panel %q (row %q) queries per-QP metrics; its description does not say %q", p.Title, p.Row, FleetNote)
		case !perQPPanels[p.Title] && has:
			t.Errorf("panel %q (row %q) queries no per-QP metric; its description says %q", p.Title, p.Row, FleetNote)
		}
	}
	t.Logf("per-QP panels: %v", slices.Sorted(maps.Keys(perQPPanels)))
}

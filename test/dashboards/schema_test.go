// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// grafanaSchemaErrors reads a dashboard with Grafana's own schema types (the
// Apache-2.0 grafana-foundation-sdk, v0.0.22: the dashboard v1 schema, the
// options and field config of Grafana's core panels, the Prometheus query)
// strictly, and returns what the schema refuses: a key it does not have, a
// value of the wrong type, a required field missing. The SDK returns its
// list of errors as an error even when the list is empty.
func grafanaSchemaErrors(raw []byte) error {
	plugins.RegisterDefaultPlugins()
	// dashboards/ernic.json is a classic (v1, schemaVersion 41) dashboard,
	// the JSON model Grafana imports and provisions; dashboardv2 is the
	// schema of Grafana 12's v2 resource API, which it is not.
	//lint:ignore SA1019 the v1 schema is the one ernic.json is written in (see above).
	var d dashboard.Dashboard
	err := d.UnmarshalJSONStrict(raw)
	var errs cog.BuildErrors
	if errors.As(err, &errs) && len(errs) == 0 {
		return nil
	}
	return err
}

// TestDashboardGrafanaSchema: dashboards/ernic.json is a dashboard Grafana
// reads as it is, every panel of a type Grafana ships (whose options the
// schema then checks); and the check refuses a dashboard with a key
// Grafana does not know, so that it can fail.
func TestDashboardGrafanaSchema(t *testing.T) {
	path := filepath.Join(root(t), DashboardPath)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := grafanaSchemaErrors(raw); err != nil {
		t.Fatalf("%s against Grafana's schema: %v", DashboardPath, err)
	}
	d, err := LoadDashboard(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Panels {
		if _, ok := cog.ConfigForPanelcfgVariant(p.Type); !ok {
			t.Errorf("panel %q: type %q is not a panel Grafana ships", p.Title, p.Type)
		}
	}

	// A key Grafana does not know, in a panel of a collapsed row, and a
	// wrong type, are refused.
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	panels := j["panels"].([]any)
	row := panels[len(panels)-1].(map[string]any)
	row["panels"].([]any)[0].(map[string]any)["colour"] = "red"
	bad, _ := json.Marshal(j)
	if err := grafanaSchemaErrors(bad); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("an unknown panel key was not refused: %v", err)
	}
	delete(row["panels"].([]any)[0].(map[string]any), "colour")
	panels[1].(map[string]any)["gridPos"] = "top"
	bad, _ = json.Marshal(j)
	if err := grafanaSchemaErrors(bad); err == nil || !strings.Contains(err.Error(), "gridPos") {
		t.Errorf("a gridPos that is not an object was not refused: %v", err)
	}
	t.Logf("%s: %d rows and %d panels valid against Grafana's schema (grafana-foundation-sdk v0.0.22)", DashboardPath, len(d.Rows), len(d.Panels))
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The static checks of dashboards/: what can be checked without promtool
// or a Prometheus (promtool_test.go and test/e2e do the rest).

func root(t *testing.T) string { return harness.RepoRoot(t) }

func loadAll(t *testing.T) (*Dashboard, *RuleFile, *Names) {
	t.Helper()
	r := root(t)
	d, err := LoadDashboard(filepath.Join(r, DashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := LoadRules(filepath.Join(r, RulesPath))
	if err != nil {
		t.Fatal(err)
	}
	names, err := LoadNames(MetadataPaths(r)...)
	if err != nil {
		t.Fatal(err)
	}
	return d, rules, names
}

// TestNamesFromMetadata: the translation of the receivers' metadata.yaml
// gives the Prometheus names of the metric contract and of the delivery
// telemetry (a sample of them, with each kind of suffix) and the label
// names of the attributes; no delivery name is an ernic name (LoadNames
// refuses two metrics of one name, across the files too).
func TestNamesFromMetadata(t *testing.T) {
	names, err := LoadNames(MetadataPaths(root(t))...)
	if err != nil {
		t.Fatal(err)
	}
	for prom, otel := range map[string]string{
		"otelcol_delivery_points_sent_total":               "otelcol.delivery.points.sent",
		"otelcol_delivery_bytes_sent_total":                "otelcol.delivery.bytes.sent",
		"otelcol_delivery_points_dropped_total":            "otelcol.delivery.points.dropped",
		"otelcol_delivery_points_not_written_total":        "otelcol.delivery.points.not_written",
		"otelcol_delivery_queue_bytes":                     "otelcol.delivery.queue.bytes",
		"otelcol_delivery_queue_capacity":                  "otelcol.delivery.queue.capacity",
		"otelcol_delivery_queued_newest_timestamp_seconds": "otelcol.delivery.queued.newest_timestamp",
		"otelcol_delivery_queue_oldest_timestamp_seconds":  "otelcol.delivery.queue.oldest_timestamp",
		"otelcol_build_info":                               "otelcol.build.info",
	} {
		if got := names.Metrics[prom]; got != otel || !names.Delivery[prom] {
			t.Errorf("%s: translated from %q (delivery %v), want %q", prom, got, names.Delivery[prom], otel)
		}
	}
	for prom := range names.Metrics {
		if want := "ernic_"; names.Delivery[prom] {
			want = "otelcol_"
			if !strings.HasPrefix(prom, want) {
				t.Errorf("delivery metric %s is not in the otelcol_ namespace", prom)
			}
		} else if !strings.HasPrefix(prom, want) {
			t.Errorf("ernic metric %s is not in the ernic_ namespace", prom)
		}
	}
	if names.PushOnly["otelcol_build_info"] || !names.PushOnly["otelcol_delivery_queue_points"] {
		t.Errorf("push-only metrics: %v", names.PushOnly)
	}
	for _, l := range []string{"exporter", "reason", "sizer", "version"} {
		if !names.Labels[l] {
			t.Errorf("delivery label %s not derived from the attributes", l)
		}
	}
	if names.Labels["service_name"] {
		t.Error("service.name, an identifying resource attribute, taken for a label")
	}
	dup := filepath.Join(t.TempDir(), "metadata.yaml")
	if err := os.WriteFile(dup, []byte("type: x\nmetrics:\n  ernic.instances:\n    unit: \"{instance}\"\n    gauge: {value_type: int}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadNames(filepath.Join(root(t), MetadataPath), dup); err == nil || !strings.Contains(err.Error(), "both translate to ernic_instances") {
		t.Errorf("a second definition of ernic_instances was not refused: %v", err)
	}
	for prom, otel := range map[string]string{
		"ernic_instances":               "ernic.instances",
		"ernic_instance_up":             "ernic.instance.up",
		"ernic_instance_uptime_seconds": "ernic.instance.uptime",
		"ernic_rdma_bytes_sent_total":   "ernic.rdma.bytes.sent",
		"ernic_flr_reset_total":         "ernic.flr.reset",
		"ernic_stats_age_seconds":       "ernic.stats.age",
		"ernic_lif_counter_total":       "ernic.lif.counter",
		"ernic_qp_wqes_by_opcode_total": "ernic.qp.wqes.by_opcode",
	} {
		if got := names.Metrics[prom]; got != otel {
			t.Errorf("%s: translated from %q, want %q", prom, got, otel)
		}
	}
	for _, l := range []string{"ernic_id", "role", "mac", "vm_name", "state", "qp", "counter", "opcode"} {
		if !names.Labels[l] {
			t.Errorf("label %s not derived from the attributes (%v)", l, names.Labels)
		}
	}
	if !names.Unlabelled["ernic_instances"] || names.Unlabelled["ernic_instance_up"] {
		t.Errorf("unlabelled metrics: %v", names.Unlabelled)
	}
	if !names.Disabled["ernic_qp_wqes_by_opcode_total"] {
		t.Errorf("ernic_qp_wqes_by_opcode_total not seen as off by default")
	}
	t.Logf("%d metrics (%d of the delivery telemetry) and %d labels from %v", len(names.Metrics), len(names.Delivery), len(names.Labels), []string{MetadataPath, DeliveryMetadataPath})
}

// TestDashboardShape: a provisioning-ready dashboard of the current schema
// with the rows, variables and panels the issue asks for.
func TestDashboardShape(t *testing.T) {
	d, _, _ := loadAll(t)
	j := d.JSON
	if v, _ := j["schemaVersion"].(float64); v < 41 {
		t.Errorf("schemaVersion %v, want >= 41 (Grafana 12)", j["schemaVersion"])
	}
	if uid, _ := j["uid"].(string); uid != "rocm-ernic-overview" {
		t.Errorf("uid %q: must stay rocm-ernic-overview (links and provisioning depend on it)", uid)
	}
	if j["id"] != nil {
		t.Errorf("id %v: an exported dashboard has id null", j["id"])
	}
	for _, k := range []string{"__inputs", "__requires", "__elements"} {
		if _, ok := j[k]; ok {
			t.Errorf("%s present: the dashboard must load as a provisioned file, not only through Import", k)
		}
	}

	// Rows, in order.
	want := []string{"Cluster overview", "Delivery", "Network traffic", "RDMA detail", "Server health", "LIF counters", "WQEs by opcode", "VM metrics"}
	if !slices.Equal(d.Rows, want) {
		t.Errorf("rows %q, want %q", d.Rows, want)
	}

	// Every data source is the ${datasource} variable, a Prometheus one.
	var walk func(path string, x any)
	sources := 0
	walk = func(path string, x any) {
		switch v := x.(type) {
		case map[string]any:
			for k, c := range v {
				if k == "datasource" {
					sources++
					ds, ok := c.(map[string]any)
					if !ok || ds["type"] != "prometheus" || ds["uid"] != "${datasource}" {
						t.Errorf("%s.datasource = %v, want {type: prometheus, uid: ${datasource}}", path, c)
					}
					continue
				}
				walk(path+"."+k, c)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	walk("", j)

	vars := map[string]map[string]any{}
	for _, v := range d.Variables() {
		vars[v["name"].(string)] = v
	}
	if ds := vars["datasource"]; ds == nil || ds["type"] != "datasource" || ds["query"] != "prometheus" {
		t.Errorf("variable datasource: %v, want type datasource, query prometheus", ds)
	}
	for _, name := range []string{"host", "ernic_id", "role", "vm", "disk_device"} {
		v := vars[name]
		if v == nil {
			t.Errorf("variable %s missing", name)
			continue
		}
		cur, _ := v["current"].(map[string]any)
		if v["type"] != "query" || v["includeAll"] != true || v["allValue"] != All || v["multi"] != true ||
			fmt.Sprint(cur["value"]) != "[$__all]" {
			t.Errorf("variable %s: type %v includeAll %v allValue %v multi %v current %v; want a query variable defaulting to All = %q",
				name, v["type"], v["includeAll"], v["allValue"], v["multi"], cur, All)
		}
	}

	// Panels: unique ids and titles, a description that gives the unit,
	// every one with a query.
	ids, titles := map[float64]bool{}, map[string]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || titles[p.Title] {
			t.Errorf("panel %q (id %v): id or title used twice", p.Title, p.ID)
		}
		ids[p.ID], titles[p.Title] = true, true
		if len(p.Description) < 40 || !strings.Contains(p.Description, "Unit") {
			t.Errorf("panel %q: the description must say what it shows and its unit (\"Unit: ...\"): %q", p.Title, p.Description)
		}
		if !slices.ContainsFunc(d.Queries, func(q Query) bool { return q.Panel == p.Title }) {
			t.Errorf("panel %q has no query", p.Title)
		}
	}
	checkLayout(t, d)
	t.Logf("%d rows, %d panels, %d queries (targets, annotations, variables), %d data source references",
		len(d.Rows), len(d.Panels), len(d.Queries), sources)
}

// checkLayout: panels stay within the 24 columns and do not overlap: the
// rows and the panels of expanded rows together, as Grafana lays them out,
// and the panels of each collapsed row among themselves.
func checkLayout(t *testing.T, d *Dashboard) {
	type box struct {
		title      string
		x, y, w, h float64
	}
	boxOf := func(p map[string]any) box {
		g, _ := p["gridPos"].(map[string]any)
		title, _ := p["title"].(string)
		b := box{title, num(g["x"]), num(g["y"]), num(g["w"]), num(g["h"])}
		if b.w <= 0 || b.h <= 0 || b.x < 0 || b.x+b.w > 24 {
			t.Errorf("panel %q: gridPos %v outside the 24 columns", title, g)
		}
		return b
	}
	groups := map[string][]box{}
	panels, _ := d.JSON["panels"].([]any)
	for _, x := range panels {
		p, _ := x.(map[string]any)
		groups[""] = append(groups[""], boxOf(p))
		inner, _ := p["panels"].([]any)
		for _, y := range inner {
			q, _ := y.(map[string]any)
			title, _ := p["title"].(string)
			groups[title] = append(groups[title], boxOf(q))
		}
	}
	for _, boxes := range groups {
		for i, a := range boxes {
			for _, b := range boxes[i+1:] {
				if a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h {
					t.Errorf("panels %q and %q overlap", a.title, b.title)
				}
			}
		}
	}
}

func num(x any) float64 { f, _ := x.(float64); return f }

// TestDashboardQueries: every query names only metrics the receiver
// defines, applies the host variable to every ernic selector and the
// ernic_id and role variables to every labelled one (so that All, the
// default, never hides data and a choice filters every panel), and uses
// only variables Grafana knows. The VM metrics row reads the guests'
// exporters instead: only the names of GuestMetrics, each with its job
// and the $vm variable.
func TestDashboardQueries(t *testing.T) {
	d, _, names := loadAll(t)
	used := map[string]bool{}
	guest := 0
	for _, q := range d.Queries {
		if q.Expr == "" {
			t.Errorf("%s: empty expression", q.Where)
			continue
		}
		if _, err := Substitute(q.Expr, Vars{RateInterval: "20s", Interval: "10s", Range: "1h"}); err != nil {
			t.Errorf("%s: %v", q.Where, err)
		}
		if GuestQuery(q) {
			guest++
			if refs := names.MetricRefs(q.Expr); len(refs) > 0 {
				t.Errorf("%s: ernic metrics in the VM row: %v", q.Where, refs)
			}
			problems := GuestProblems(q.Expr)
			if q.Kind == Variable {
				problems = slices.DeleteFunc(problems, func(p string) bool { return !strings.HasPrefix(p, "unknown") })
			}
			if len(problems) > 0 || !strings.ContainsAny(q.Expr, "{") {
				t.Errorf("%s: %v\n%s", q.Where, problems, q.Expr)
			}
			continue
		}
		if u := names.Unknown(q.Expr); len(u) > 0 {
			t.Errorf("%s: metrics the receiver does not define: %v\n%s", q.Where, u, q.Expr)
		}
		refs := names.MetricRefs(q.Expr)
		if len(refs) == 0 {
			t.Errorf("%s: no ernic_* or otelcol_* metric: %s", q.Where, q.Expr)
		}
		for _, m := range refs {
			used[m] = true
		}
		if bad := names.UnhostedSelectors(q.Expr); len(bad) > 0 && q.Panel != "host" {
			t.Errorf("%s: selectors without %s: %v", q.Where, HostMatcher, bad)
		}
		if q.Kind == Variable {
			if !names.Labels[q.Label] && q.Label != "instance" {
				t.Errorf("%s: label_values of %q, not a label of the receiver", q.Where, q.Label)
			}
			continue
		}
		if bad := names.UnfilteredSelectors(q.Expr, `ernic_id=~"$ernic_id"`, `role=~"$role"`); len(bad) > 0 {
			t.Errorf("%s: selectors without ernic_id=~\"$ernic_id\" and role=~\"$role\": %v", q.Where, bad)
		}
	}
	if guest < 14 {
		t.Errorf("%d queries of the VM row and its variables, want at least 14", guest)
	}
	var unused []string
	for m := range names.Metrics {
		if !used[m] {
			unused = append(unused, m)
		}
	}
	slices.Sort(unused)
	t.Logf("metrics the dashboard does not show: %v", unused)
}

// TestRulesShape: each alert has a severity, a `for:`, a summary and a
// description (which says why its threshold), and names only metrics the
// receiver defines.
func TestRulesShape(t *testing.T) {
	_, rules, names := loadAll(t)
	alerts := rules.Alerts()
	if len(alerts) == 0 {
		t.Fatal("no alerts")
	}
	for _, r := range alerts {
		if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, s)
		}
		if r.For == "" || r.For == "0s" {
			t.Errorf("%s: no `for:`", r.Alert)
		}
		if r.Annotations["summary"] == "" || len(r.Annotations["description"]) < 100 {
			t.Errorf("%s: summary and a description that says why are required", r.Alert)
		}
		if u := names.Unknown(r.Expr); len(u) > 0 {
			t.Errorf("%s: metrics the receiver does not define: %v", r.Alert, u)
		}
		if len(names.MetricRefs(r.Expr)) == 0 {
			t.Errorf("%s: no ernic_* or otelcol_* metric in %q", r.Alert, r.Expr)
		}
	}
}

// TestRulesScaled: the test copy of the rules divides every `for:` and
// range by the factor, and nothing else.
func TestRulesScaled(t *testing.T) {
	_, rules, _ := loadAll(t)
	scaled, err := rules.Scaled(20)
	if err != nil {
		t.Fatal(err)
	}
	orig, fast := rules.Alerts(), scaled.Alerts()
	if len(orig) != len(fast) {
		t.Fatalf("%d alerts scaled to %d", len(orig), len(fast))
	}
	durRE := regexp.MustCompile(`\[[0-9a-z:]+\]|offset -?[0-9a-z]+`)
	for i, r := range orig {
		s := fast[i]
		t.Logf("%s: for %s -> %s; %v -> %v", r.Alert, r.For, s.For, durRE.FindAllString(r.Expr, -1), durRE.FindAllString(s.Expr, -1))
		if durRE.ReplaceAllString(r.Expr, "[]") != durRE.ReplaceAllString(s.Expr, "[]") {
			t.Errorf("%s: scaling changed more than durations:\n%s\n%s", r.Alert, r.Expr, s.Expr)
		}
	}
	for in, want := range map[string]string{"5m": "15s", "10m": "30s", "1m": "3s", "30s": "2s", "1s": "1s"} {
		f := &RuleFile{Groups: []RuleGroup{{Name: "g", Rules: []Rule{{Alert: "A", Expr: "rate(x[" + in + "]) > 0", For: in}}}}}
		s, err := f.Scaled(20)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.Groups[0].Rules[0]; r.For != want || r.Expr != "rate(x["+want+"]) > 0" {
			t.Errorf("%s scaled by 20: for %s, expr %s; want %s", in, r.For, r.Expr, want)
		}
	}
	// Subqueries, and ranges inside strings left alone.
	for in, want := range map[string]string{
		`max_over_time(rate(x[2m])[10m:1m])`: `max_over_time(rate(x[6s])[30s:3s])`,
		`max_over_time(rate(x[2m])[10m:])`:   `max_over_time(rate(x[6s])[30s:])`,
		`x{l=~"a[5m]"}`:                      `x{l=~"a[5m]"}`,
	} {
		f := &RuleFile{Groups: []RuleGroup{{Name: "g", Rules: []Rule{{Record: "r", Expr: in}}}}}
		s, err := f.Scaled(20)
		if err != nil || s.Groups[0].Rules[0].Expr != want {
			t.Errorf("%s scaled by 20: %v (%v), want %s", in, s, err, want)
		}
	}
	for in, want := range map[string]string{
		`last_over_time(x[1h] offset 1h)`: `last_over_time(x[3m] offset 3m)`,
		`x offset -10m`:                   `x offset -30s`,
		`x{l="offset 5m"}`:                `x{l="offset 5m"}`,
	} {
		f := &RuleFile{Groups: []RuleGroup{{Name: "g", Rules: []Rule{{Record: "r", Expr: in}}}}}
		s, err := f.Scaled(20)
		if err != nil || s.Groups[0].Rules[0].Expr != want {
			t.Errorf("%s scaled by 20: %v (%v), want %s", in, s, err, want)
		}
	}
	f := &RuleFile{Groups: []RuleGroup{{Name: "g", Rules: []Rule{{Record: "r", Expr: `x @ 1000`}}}}}
	if _, err := f.Scaled(20); err == nil {
		t.Errorf("x @ 1000 scaled without an error: @ is not scaled")
	}
}

// readmeSection returns docs/dashboards.md.
func readmeSection(t *testing.T) string {
	t.Helper()
	s, err := DashboardsDoc(filepath.Join(root(t), DashboardsDocPath))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readmeExamples returns the PromQL examples of docs/dashboards.md (those
// users know from the legacy exporter).
func readmeExamples(t *testing.T) []string { return PromQLBlocks(readmeSection(t)) }

// TestReadme: docs/dashboards.md lists every panel and alert, and its
// PromQL examples (those users know from the legacy exporter) name only
// metrics the receiver defines.
func TestReadme(t *testing.T) {
	d, rules, names := loadAll(t)
	sec := strings.Join(strings.Fields(readmeSection(t)), " ") // titles may wrap
	for _, p := range d.Panels {
		if !strings.Contains(sec, "**"+p.Title+"**") {
			t.Errorf("docs/dashboards.md's panel list lacks **%s**", p.Title)
		}
	}
	for _, r := range rules.Alerts() {
		if !strings.Contains(sec, "`"+r.Alert+"`") {
			t.Errorf("docs/dashboards.md does not list alert %s", r.Alert)
		}
	}
	ex := readmeExamples(t)
	if len(ex) < 4 {
		t.Errorf("%d PromQL examples in docs/dashboards.md, want the legacy exporter's 4", len(ex))
	}
	for _, e := range ex {
		if u := names.Unknown(e); len(u) > 0 || len(names.MetricRefs(e)) == 0 {
			t.Errorf("documented example %q: unknown metrics %v", e, u)
		}
	}
}

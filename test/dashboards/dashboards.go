// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package dashboards reads what dashboards/ ships, the Grafana dashboard
// (ernic.json) and the Prometheus alerting rules (alerts.yaml), for the tests
// that check them: every PromQL expression with its place, Grafana's
// variables replaced by valid PromQL, the rules with their durations scaled
// down for a test Prometheus, and the Prometheus metric and label names the
// receiver defines, derived from its metadata.yaml.
//
// The tests are in this directory (static checks; promtool check/test rules
// behind the e2e tag) and in test/e2e/dashboards_harness_test.go (every
// query and alert against a real Prometheus fed by the collector).
package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Paths relative to the repository root.
const (
	DashboardPath = "dashboards/ernic.json"
	RulesPath     = "dashboards/alerts.yaml"
	MetadataPath  = "receiver/ernicreceiver/metadata.yaml"
	// DeliveryMetadataPath defines the delivery telemetry (otelcol_*).
	DeliveryMetadataPath = "receiver/selftelemetryreceiver/metadata.yaml"
	RuleTestsPath        = "test/dashboards/testdata/alerts_test.yml"
	DashboardsDocPath    = "docs/dashboards.md"
)

// ---------------------------------------------------------------------------
// The Grafana dashboard.

// Dashboard is dashboards/ernic.json, decoded generically (Grafana's schema
// has far more than the tests need), plus its queries.
type Dashboard struct {
	JSON    map[string]any
	Panels  []Panel // every panel but rows, those of collapsed rows included, in file order
	Rows    []string
	Queries []Query // every PromQL expression: targets, annotations, variables
}

// Panel is one panel (not a row).
type Panel struct {
	ID          float64
	Title       string
	Type        string
	Row         string
	Description string
	JSON        map[string]any
}

// QueryKind is where a query comes from.
type QueryKind string

const (
	// Target is a panel's target: a range query over the dashboard's time
	// range, or an instant query at its end ("instant": true).
	Target QueryKind = "target"
	// Annotation is an annotation query: a range query.
	Annotation QueryKind = "annotation"
	// Variable is the series selector of a variable's label_values(): its
	// label values are the variable's options.
	Variable QueryKind = "variable"
)

// Query is one PromQL expression of the dashboard, as written (Grafana
// variables unreplaced).
type Query struct {
	Kind    QueryKind
	Where   string // e.g. `panel "Servers" (row "Cluster overview") target A`
	Panel   string // panel title, annotation or variable name
	RefID   string
	Expr    string
	Instant bool
	Label   string // Variable: the label whose values are listed
}

// LoadDashboard reads and indexes the dashboard at path.
func LoadDashboard(path string) (*Dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &Dashboard{}
	if err := json.Unmarshal(b, &d.JSON); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var walk func(list []any, row string) error
	walk = func(list []any, row string) error {
		for _, x := range list {
			p, ok := x.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: a panel is not an object: %v", path, x)
			}
			title, _ := p["title"].(string)
			typ, _ := p["type"].(string)
			if typ == "row" {
				d.Rows = append(d.Rows, title)
				inner, _ := p["panels"].([]any)
				if err := walk(inner, title); err != nil {
					return err
				}
				row = title
				continue
			}
			desc, _ := p["description"].(string)
			id, _ := p["id"].(float64)
			d.Panels = append(d.Panels, Panel{ID: id, Title: title, Type: typ, Row: row, Description: desc, JSON: p})
			targets, _ := p["targets"].([]any)
			for _, t := range targets {
				tm, _ := t.(map[string]any)
				expr, _ := tm["expr"].(string)
				ref, _ := tm["refId"].(string)
				instant, _ := tm["instant"].(bool)
				d.Queries = append(d.Queries, Query{
					Kind: Target, Where: fmt.Sprintf("panel %q (row %q) target %s", title, row, ref),
					Panel: title, RefID: ref, Expr: expr, Instant: instant,
				})
			}
		}
		return nil
	}
	panels, _ := d.JSON["panels"].([]any)
	if err := walk(panels, ""); err != nil {
		return nil, err
	}
	if ann, ok := d.JSON["annotations"].(map[string]any); ok {
		list, _ := ann["list"].([]any)
		for _, a := range list {
			am, _ := a.(map[string]any)
			target, _ := am["target"].(map[string]any)
			expr, ok := target["expr"].(string)
			if !ok {
				expr, ok = am["expr"].(string) // the legacy place, which Grafana migrates
			}
			if ok {
				name, _ := am["name"].(string)
				d.Queries = append(d.Queries, Query{Kind: Annotation, Where: fmt.Sprintf("annotation %q", name), Panel: name, Expr: expr})
			}
		}
	}
	for _, v := range d.Variables() {
		if v["type"] != "query" {
			continue
		}
		name, _ := v["name"].(string)
		def, ok := v["query"].(string)
		if q, isObj := v["query"].(map[string]any); isObj {
			def, ok = q["query"].(string)
		}
		if !ok {
			return nil, fmt.Errorf("%s: variable %s: no query", path, name)
		}
		sel, label, err := ParseLabelValues(def)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %s: %w", path, name, err)
		}
		d.Queries = append(d.Queries, Query{Kind: Variable, Where: fmt.Sprintf("variable %q", name), Panel: name, Expr: sel, Label: label, Instant: true})
	}
	return d, nil
}

// Variables returns the dashboard's template variables.
func (d *Dashboard) Variables() []map[string]any {
	var out []map[string]any
	if tm, ok := d.JSON["templating"].(map[string]any); ok {
		list, _ := tm["list"].([]any)
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

var labelValuesRE = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// ParseLabelValues splits a Grafana variable query label_values(selector,
// label) into its series selector (PromQL) and label.
func ParseLabelValues(def string) (selector, label string, err error) {
	m := labelValuesRE.FindStringSubmatch(strings.TrimSpace(def))
	if m == nil {
		return "", "", fmt.Errorf("query %q is not label_values(<selector>, <label>)", def)
	}
	return strings.TrimSpace(m[1]), m[2], nil
}

// Vars are the values the Grafana variables are replaced with. The
// template variables ($host, $ernic_id, $role, $vm, $disk_device) get
// their All value, ".*", the value a dashboard opens with, unless Host is
// set.
type Vars struct {
	RateInterval string // $__rate_interval, e.g. "20s"
	Interval     string // $__interval
	Range        string // $__range
	// Host, when set, is the value of $host (a regular expression, as
	// Grafana writes a multi-value choice).
	Host string
}

// All is the allValue of the dashboard's template variables.
const All = ".*"

var grafanaVarRE = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::[a-z]+)?\}?`)

// Substitute replaces the Grafana variables in expr as Grafana would with
// v, leaving valid PromQL. A variable it does not know is an error.
func Substitute(expr string, v Vars) (string, error) {
	var unknown []string
	out := grafanaVarRE.ReplaceAllStringFunc(expr, func(s string) string {
		name := grafanaVarRE.FindStringSubmatch(s)[1]
		switch name {
		case "host":
			if v.Host != "" {
				return v.Host
			}
			return All
		case "ernic_id", "role", "vm", "disk_device":
			return All
		case "__rate_interval":
			return v.RateInterval
		case "__interval":
			return v.Interval
		case "__range":
			return v.Range
		}
		unknown = append(unknown, s)
		return s
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown Grafana variables %v in %q", unknown, expr)
	}
	return out, nil
}

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
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/otlptranslator"
	"gopkg.in/yaml.v3"
)

// Paths relative to the repository root.
const (
	DashboardPath = "dashboards/ernic.json"
	RulesPath     = "dashboards/alerts.yaml"
	MetadataPath  = "receiver/ernicreceiver/metadata.yaml"
	RuleTestsPath = "test/dashboards/testdata/alerts_test.yml"
	ReadmePath    = "README.md"
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

// ---------------------------------------------------------------------------
// The README.

// ReadmeSection returns the "## Dashboard and alerts" section of the README
// at path, up to the next "## " heading.
func ReadmeSection(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.Index(s, "\n## Dashboard and alerts\n")
	if i < 0 {
		return "", fmt.Errorf(`%s has no "## Dashboard and alerts" section`, path)
	}
	s = s[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	return s, nil
}

var promqlBlockRE = regexp.MustCompile("(?s)```promql\n(.*?)```")

// PromQLBlocks returns the expressions of the ```promql blocks of text.
func PromQLBlocks(text string) []string {
	var out []string
	for _, m := range promqlBlockRE.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// ---------------------------------------------------------------------------
// The alerting rules.

// RuleFile is a Prometheus rule file.
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups"`
}

// RuleGroup is one group of a rule file.
type RuleGroup struct {
	Name     string `yaml:"name"`
	Interval string `yaml:"interval,omitempty"`
	Rules    []Rule `yaml:"rules"`
}

// Rule is one alerting or recording rule.
type Rule struct {
	Alert       string            `yaml:"alert,omitempty"`
	Record      string            `yaml:"record,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// LoadRules reads the rule file at path. Unknown keys are an error.
func LoadRules(path string) (*RuleFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f RuleFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// Alerts returns the alerting rules of every group, in file order.
func (f *RuleFile) Alerts() []Rule {
	var out []Rule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

// Marshal returns f as a rule file.
func (f *RuleFile) Marshal() ([]byte, error) { return yaml.Marshal(f) }

// rangeRE matches a range or subquery: [5m], [1h:30s], [1h:].
var rangeRE = regexp.MustCompile(`\[([0-9][0-9a-z]*)(:([0-9][0-9a-z]*)?)?\]`)

// Scaled returns a copy of f in which time runs factor times faster: every
// `for:` and every range or subquery duration in an expression is divided
// by factor (rounded up to a whole second, at least 1s). Numeric thresholds
// are left alone (ernic_stats_age_seconds > 30 stays 30 s), and so is the
// query lookback of the Prometheus that evaluates them (absent(), instant
// selectors): scale that with --query.lookback-delta (5m / factor). An
// expression with `offset` or `@` is refused, since it is not scaled.
func (f *RuleFile) Scaled(factor int) (*RuleFile, error) {
	scale := func(s string) (string, error) {
		d, err := model.ParseDuration(s)
		if err != nil {
			return "", err
		}
		return ScaleDuration(time.Duration(d), factor), nil
	}
	out := &RuleFile{}
	for _, g := range f.Groups {
		ng := g
		ng.Rules = nil
		if g.Interval != "" {
			iv, err := scale(g.Interval)
			if err != nil {
				return nil, fmt.Errorf("group %s interval: %w", g.Name, err)
			}
			ng.Interval = iv
		}
		for _, r := range g.Rules {
			name := r.Alert + r.Record
			if code := stripStrings(r.Expr); strings.Contains(code, "offset") || strings.Contains(code, "@") {
				return nil, fmt.Errorf("rule %s: offset and @ are not scaled; extend Scaled", name)
			}
			var serr error
			r.Expr = replaceOutsideStrings(r.Expr, rangeRE, func(s string) string {
				m := rangeRE.FindStringSubmatch(s)
				rng, err := scale(m[1])
				if err != nil {
					serr = err
					return s
				}
				if m[2] == "" {
					return "[" + rng + "]"
				}
				step := ""
				if m[3] != "" {
					if step, err = scale(m[3]); err != nil {
						serr = err
						return s
					}
				}
				return "[" + rng + ":" + step + "]"
			})
			if serr != nil {
				return nil, fmt.Errorf("rule %s: %w", name, serr)
			}
			if r.For != "" {
				fr, err := scale(r.For)
				if err != nil {
					return nil, fmt.Errorf("rule %s for: %w", name, err)
				}
				r.For = fr
			}
			ng.Rules = append(ng.Rules, r)
		}
		out.Groups = append(out.Groups, ng)
	}
	return out, nil
}

// ScaleDuration is d / factor in Prometheus duration syntax, rounded up to
// a whole second, at least 1s.
func ScaleDuration(d time.Duration, factor int) string {
	s := max(1, int64(math.Ceil(d.Seconds()/float64(factor))))
	return model.Duration(time.Duration(s) * time.Second).String()
}

// ---------------------------------------------------------------------------
// The names the receiver defines.

// Names are the Prometheus names of the receiver's metrics and attributes,
// as the shipped configurations translate them (OTLP → Prometheus,
// UnderscoreEscapingWithSuffixes: `.` → `_`, unit suffix, `_total` for
// monotonic sums).
type Names struct {
	// Metrics maps every Prometheus metric name to its OTel name.
	Metrics map[string]string
	// Labels are the label names of the attributes.
	Labels map[string]bool
	// Unlabelled are the metrics without attributes (ernic_instances...).
	Unlabelled map[string]bool
	// Disabled are the metrics off by default.
	Disabled map[string]bool
}

type metadataFile struct {
	ResourceAttributes map[string]struct{} `yaml:"resource_attributes"`
	Attributes         map[string]struct {
		NameOverride string `yaml:"name_override"`
	} `yaml:"attributes"`
	Metrics map[string]struct {
		Enabled bool   `yaml:"enabled"`
		Unit    string `yaml:"unit"`
		Sum     *struct {
			Monotonic bool `yaml:"monotonic"`
		} `yaml:"sum"`
		Gauge      *struct{} `yaml:"gauge"`
		Attributes []string  `yaml:"attributes"`
	} `yaml:"metrics"`
}

// clusterMetrics are the metrics the receiver records in its resource
// without attributes (scraper.go, recordInstances): the only ones with no
// label at all. test/e2e's families table proves it on the served page.
var clusterMetrics = map[string]bool{"ernic.instances": true, "ernic.vms": true}

// LoadNames reads the receiver's metadata.yaml at path and translates its
// metric and attribute names with the OTLP → Prometheus translator the
// collector's exporters use (github.com/prometheus/otlptranslator).
func LoadNames(path string) (*Names, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var md metadataFile
	if err := yaml.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n := &Names{Metrics: map[string]string{}, Labels: map[string]bool{}, Unlabelled: map[string]bool{}, Disabled: map[string]bool{}}
	namer := otlptranslator.NewMetricNamer("", otlptranslator.UnderscoreEscapingWithSuffixes)
	for name, m := range md.Metrics {
		var typ otlptranslator.MetricType
		switch {
		case m.Sum != nil && m.Sum.Monotonic:
			typ = otlptranslator.MetricTypeMonotonicCounter
		case m.Sum != nil:
			typ = otlptranslator.MetricTypeNonMonotonicCounter
		case m.Gauge != nil:
			typ = otlptranslator.MetricTypeGauge
		default:
			return nil, fmt.Errorf("%s: metric %s is neither a sum nor a gauge", path, name)
		}
		prom, err := namer.Build(otlptranslator.Metric{Name: name, Unit: m.Unit, Type: typ})
		if err != nil {
			return nil, fmt.Errorf("%s: metric %s: %w", path, name, err)
		}
		if other, dup := n.Metrics[prom]; dup {
			return nil, fmt.Errorf("%s: metrics %s and %s both translate to %s", path, other, name, prom)
		}
		n.Metrics[prom] = name
		if clusterMetrics[name] {
			n.Unlabelled[prom] = true
		}
		if !m.Enabled {
			n.Disabled[prom] = true
		}
	}
	labeler := otlptranslator.LabelNamer{}
	// The resource attributes (ernic.id, role) are labels of every series
	// but the cluster metrics' (resource_to_telemetry_conversion).
	for name := range md.ResourceAttributes {
		l, err := labeler.Build(name)
		if err != nil {
			return nil, fmt.Errorf("%s: resource attribute %s: %w", path, name, err)
		}
		n.Labels[l] = true
	}
	for name, a := range md.Attributes {
		if a.NameOverride != "" {
			name = a.NameOverride
		}
		l, err := labeler.Build(name)
		if err != nil {
			return nil, fmt.Errorf("%s: attribute %s: %w", path, name, err)
		}
		n.Labels[l] = true
	}
	if len(n.Metrics) == 0 {
		return nil, fmt.Errorf("%s: no metrics", path)
	}
	return n, nil
}

// ernicIdentRE matches the identifiers of the project's namespace.
var ernicIdentRE = regexp.MustCompile(`\bernic_[a-z0-9_]+\b`)

// MetricRefs returns the ernic_* metric names expr refers to: every
// ernic_[a-z0-9_]+ identifier that is not one of the receiver's label names
// (ernic_id). Identifiers inside quoted strings are skipped.
func (n *Names) MetricRefs(expr string) []string {
	var out []string
	for _, id := range ernicIdentRE.FindAllString(stripStrings(expr), -1) {
		if !n.Labels[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Unknown returns the ernic_* metric names of expr the receiver does not
// define.
func (n *Names) Unknown(expr string) []string {
	var out []string
	for _, m := range n.MetricRefs(expr) {
		if _, ok := n.Metrics[m]; !ok {
			out = append(out, m)
		}
	}
	return out
}

var stringRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")

// stripStrings blanks PromQL string literals (label values, regexps).
func stripStrings(expr string) string { return stringRE.ReplaceAllString(expr, `""`) }

// replaceOutsideStrings is re.ReplaceAllStringFunc(expr, f) on the parts of
// expr outside PromQL string literals.
func replaceOutsideStrings(expr string, re *regexp.Regexp, f func(string) string) string {
	var b strings.Builder
	last := 0
	for _, loc := range stringRE.FindAllStringIndex(expr, -1) {
		b.WriteString(re.ReplaceAllStringFunc(expr[last:loc[0]], f))
		b.WriteString(expr[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(re.ReplaceAllStringFunc(expr[last:], f))
	return b.String()
}

// selectorRE matches an ernic_* identifier and the matchers that follow it.
var selectorRE = regexp.MustCompile(`\b(ernic_[a-z0-9_]+)\b(\s*\{[^}]*\})?`)

// HostMatcher is the matcher of the dashboard's host variable: every ernic
// selector carries it.
const HostMatcher = `instance=~"$host"`

// UnhostedSelectors returns the ernic selectors of expr, those of the
// metrics without other labels included, that lack HostMatcher.
func (n *Names) UnhostedSelectors(expr string) []string {
	var out []string
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		if !n.Labels[m[1]] && !strings.Contains(m[2], HostMatcher) {
			out = append(out, m[0])
		}
	}
	return out
}

// GuestQuery reports whether q reads the guests' exporters: a query of the
// VM metrics row or of its variables (vm, disk_device).
func GuestQuery(q Query) bool {
	return strings.Contains(q.Where, `(row "VM metrics")`) || q.Panel == "vm" || q.Panel == "disk_device"
}

// GuestMetrics are the metrics of the guests' own exporters that the VM
// metrics row reads, with the scrape job each comes from (README, VM
// metrics): node_exporter 1.5 (Debian bookworm's prometheus-node-exporter),
// rdma_exporter (github.com/yuuki/rdma_exporter: rdma_<sysfs counter>_total
// {device, port}) and AMD's Device Metrics Exporter (gpu_* and pcie_*,
// labels gpu_id and clock_type).
var GuestMetrics = map[string]string{
	"node_cpu_seconds_total":            "ernic-vm-node",
	"node_memory_MemTotal_bytes":        "ernic-vm-node",
	"node_memory_MemAvailable_bytes":    "ernic-vm-node",
	"node_disk_read_bytes_total":        "ernic-vm-node",
	"node_disk_written_bytes_total":     "ernic-vm-node",
	"node_network_receive_bytes_total":  "ernic-vm-node",
	"node_network_transmit_bytes_total": "ernic-vm-node",
	"node_uname_info":                   "ernic-vm-node",
	"rdma_port_rcv_data_total":          "ernic-vm-rdma",
	"rdma_port_xmit_data_total":         "ernic-vm-rdma",
	"rdma_port_rcv_packets_total":       "ernic-vm-rdma",
	"rdma_port_xmit_packets_total":      "ernic-vm-rdma",
	"gpu_junction_temperature":          "ernic-vm-gpu",
	"gpu_edge_temperature":              "ernic-vm-gpu",
	"gpu_gfx_activity":                  "ernic-vm-gpu",
	"gpu_power_usage":                   "ernic-vm-gpu",
	"gpu_clock":                         "ernic-vm-gpu",
	"pcie_bandwidth":                    "ernic-vm-gpu",
}

// guestSelectorRE matches a metric of a guest exporter and its matchers.
var guestSelectorRE = regexp.MustCompile(`\b((?:node|rdma|gpu|pcie)_[A-Za-z0-9_]+)\b(\s*\{[^}]*\})?`)

// GuestProblems returns what is wrong with the guest metrics of expr: a
// name GuestMetrics does not list, or a selector without its job and the
// $vm variable.
func GuestProblems(expr string) []string {
	var out []string
	for _, m := range guestSelectorRE.FindAllStringSubmatch(stripStrings(expr), -1) {
		if _, ok := GuestMetrics[m[1]]; !ok {
			out = append(out, "unknown guest metric "+m[1])
		}
	}
	for _, m := range guestSelectorRE.FindAllStringSubmatch(expr, -1) {
		job, ok := GuestMetrics[m[1]]
		if ok && (!strings.Contains(m[2], `job="`+job+`"`) || !strings.Contains(m[2], `instance=~"$vm"`)) {
			out = append(out, fmt.Sprintf("%s without job=%q and instance=~\"$vm\"", m[0], job))
		}
	}
	return out
}

// UnfilteredSelectors returns the selectors of expr for metrics with
// labels that lack one of the matchers: each such metric must be selected
// with every matcher given (e.g. `ernic_id=~"$ernic_id"`), so that the
// dashboard's variables apply to every panel.
func (n *Names) UnfilteredSelectors(expr string, matchers ...string) []string {
	var out []string
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		name, braces := m[1], m[2]
		if n.Labels[name] || n.Unlabelled[name] {
			continue
		}
		for _, want := range matchers {
			if !strings.Contains(braces, want) {
				out = append(out, m[0])
				break
			}
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// promtool.

// Promtool returns the promtool binary: $PROMTOOL_BIN, else promtool on
// PATH (Debian's package prometheus, which .ci/run installs).
func Promtool() (string, error) {
	if p := os.Getenv("PROMTOOL_BIN"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		return "", fmt.Errorf("promtool is needed: install Debian's package prometheus "+
			"(apt-get install -y --no-install-recommends prometheus; .ci/run does) or set PROMTOOL_BIN: %w", err)
	}
	return p, nil
}

// NamedExpr is a PromQL expression and where it comes from.
type NamedExpr struct {
	Where string
	Expr  string
}

// RecordingRules returns a rule file with one recording rule per
// expression, each in a group named after its place, so that `promtool
// check rules` parses them all and names the one that fails.
func RecordingRules(exprs []NamedExpr) ([]byte, error) {
	f := &RuleFile{}
	for i, e := range exprs {
		f.Groups = append(f.Groups, RuleGroup{
			Name:  fmt.Sprintf("%03d %s", i, e.Where),
			Rules: []Rule{{Record: fmt.Sprintf("check:expr_%03d", i), Expr: e.Expr}},
		})
	}
	return f.Marshal()
}

// CheckRules runs `promtool check rules` on files and returns its output.
func CheckRules(promtool string, files ...string) (string, error) {
	out, err := exec.Command(promtool, append([]string{"check", "rules"}, files...)...).CombinedOutput()
	return string(out), err
}

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

	"github.com/prometheus/otlptranslator"
	"gopkg.in/yaml.v3"
)

// ---------------------------------------------------------------------------
// The names the receiver defines.

// Names are the Prometheus names of the receivers' metrics and attributes
// (the ernic receiver's and the selftelemetry receiver's), as the shipped
// configurations translate them (OTLP → Prometheus,
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
	// PerQP are the metrics with a qp attribute, one series per QP: those
	// the fleet profile (config/fleet.yaml) does not push.
	PerQP map[string]bool
	// Delivery are the selftelemetry receiver's metrics (otelcol_*): a
	// host's, without ernic_id and role.
	Delivery map[string]bool
	// PushOnly are the delivery metrics only a push exporter has
	// (otelcol_delivery_*): a configuration that only serves
	// (config/local.yaml) publishes none of them.
	PushOnly map[string]bool
}

type metadataFile struct {
	Type               string              `yaml:"type"`
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
// without attributes (scraper.go: recordInstances, and scrapeEach for
// ernic.run_dir.readable when the run directory cannot be read): the only
// ones with no label at all. test/e2e's families table proves it on the
// served page.
var clusterMetrics = map[string]bool{"ernic.instances": true, "ernic.instances.unpublished": true, "ernic.vms": true, "ernic.run_dir.readable": true}

// LoadNames reads the receivers' metadata.yaml at paths (MetadataPath and
// DeliveryMetadataPath under a repository root) and translates their metric
// and attribute names with the OTLP → Prometheus translator the
// collector's exporters use (github.com/prometheus/otlptranslator). Two
// metrics that translate to one name, in one file or across them, are an
// error: their series would collide.
func LoadNames(paths ...string) (*Names, error) {
	n := &Names{Metrics: map[string]string{}, Labels: map[string]bool{}, Unlabelled: map[string]bool{}, Disabled: map[string]bool{}, PerQP: map[string]bool{},
		Delivery: map[string]bool{}, PushOnly: map[string]bool{}}
	for _, path := range paths {
		if err := n.load(path); err != nil {
			return nil, err
		}
	}
	if len(n.Metrics) == 0 {
		return nil, fmt.Errorf("%v: no metrics", paths)
	}
	return n, nil
}

// MetadataPaths are the receivers' definitions under the repository root.
func MetadataPaths(root string) []string {
	return []string{filepath.Join(root, MetadataPath), filepath.Join(root, DeliveryMetadataPath)}
}

// load adds the names of one receiver's metadata.yaml.
func (n *Names) load(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var md metadataFile
	if err := yaml.Unmarshal(b, &md); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	delivery := md.Type == "selftelemetry"
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
			return fmt.Errorf("%s: metric %s is neither a sum nor a gauge", path, name)
		}
		prom, err := namer.Build(otlptranslator.Metric{Name: name, Unit: m.Unit, Type: typ})
		if err != nil {
			return fmt.Errorf("%s: metric %s: %w", path, name, err)
		}
		if other, dup := n.Metrics[prom]; dup {
			return fmt.Errorf("%s: metrics %s and %s both translate to %s", path, other, name, prom)
		}
		if delivery {
			n.Delivery[prom] = true
			if strings.HasPrefix(prom, "otelcol_delivery_") {
				n.PushOnly[prom] = true
			}
		}
		n.Metrics[prom] = name
		if clusterMetrics[name] {
			n.Unlabelled[prom] = true
		}
		if !m.Enabled {
			n.Disabled[prom] = true
		}
		if slices.Contains(m.Attributes, "qp") {
			n.PerQP[prom] = true
		}
	}
	labeler := otlptranslator.LabelNamer{}
	// The resource attributes (ernic.id, role) are labels of every series
	// but the cluster metrics' (resource_to_telemetry_conversion); the
	// identifying ones (service.name) become job and instance instead.
	for name := range md.ResourceAttributes {
		if strings.HasPrefix(name, "service.") {
			continue
		}
		l, err := labeler.Build(name)
		if err != nil {
			return fmt.Errorf("%s: resource attribute %s: %w", path, name, err)
		}
		n.Labels[l] = true
	}
	for name, a := range md.Attributes {
		if a.NameOverride != "" {
			name = a.NameOverride
		}
		l, err := labeler.Build(name)
		if err != nil {
			return fmt.Errorf("%s: attribute %s: %w", path, name, err)
		}
		n.Labels[l] = true
	}
	return nil
}

// ernicIdentRE matches the identifiers of the project's namespaces: the
// ernic receiver's ernic_* and the selftelemetry receiver's otelcol_*.
var ernicIdentRE = regexp.MustCompile(`\b(?:ernic|otelcol)_[a-z0-9_]+\b`)

// MetricRefs returns the ernic_* and otelcol_* metric names expr refers to:
// every such identifier that is not one of the receivers' label names
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

// Unknown returns the ernic_* and otelcol_* metric names of expr the
// receivers do not define.
func (n *Names) Unknown(expr string) []string {
	var out []string
	for _, m := range n.MetricRefs(expr) {
		if _, ok := n.Metrics[m]; !ok {
			out = append(out, m)
		}
	}
	return out
}

// PushOnlyRefs returns the metrics of expr that only a push configuration
// publishes (otelcol_delivery_*): a query of them may be empty on a
// backend that scrapes config/local.yaml.
func (n *Names) PushOnlyRefs(expr string) []string { return n.refsIn(expr, n.PushOnly) }

// refsIn returns the metrics of expr that are in set.
func (n *Names) refsIn(expr string, set map[string]bool) []string {
	var out []string
	for _, m := range n.MetricRefs(expr) {
		if set[m] {
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

// selectorRE matches an ernic_* or otelcol_* identifier and the matchers
// that follow it.
var selectorRE = regexp.MustCompile(`\b((?:ernic|otelcol)_[a-z0-9_]+)\b(\s*\{[^}]*\})?`)

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
// metrics row reads, with the scrape job each comes from (docs/dashboards.md, VM
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
		if n.Labels[name] || n.Unlabelled[name] || n.Delivery[name] {
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

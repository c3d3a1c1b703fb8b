// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestTextExporterMatchesContrib: config/local.yaml's prometheus_text
// exporter and contrib's prometheus exporter (with the settings the
// distribution used before: suffixes, no scope labels; resource attributes,
// the instances' ernic.id and role, as labels), fed by the same pipeline on the fixture run directory, serve
// the same families: names, HELP, TYPE, and every series with the same
// labels and value. Contrib's exporter is only in the test build.
func TestTextExporterMatchesContrib(t *testing.T) {
	harness.TestBuildBinary(t)
	runDir := t.TempDir()
	waitPastOwnStart(t)
	writeRunDir(t, runDir, fixtures(time.Now()))
	textPort, contribPort, healthPort := harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	override := filepath.Join(t.TempDir(), "both.yaml")
	if err := os.WriteFile(override, []byte(fmt.Sprintf(opcodeReceiver+`exporters:
  prometheus_text:
    endpoint: 127.0.0.1:%d
  prometheus:
    endpoint: 127.0.0.1:%d
    translation_strategy: UnderscoreEscapingWithSuffixes
    without_scope_info: true
    resource_to_telemetry_conversion:
      enabled: true
    metric_expiration: 1m
extensions:
  healthcheckv2:
    http:
      endpoint: 127.0.0.1:%d
service:
  pipelines:
    metrics:
      exporters: [prometheus_text, prometheus]
`, textPort, contribPort, healthPort)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := harness.StartTestBuildCollector(t, []string{"--config", filepath.Join(harness.RepoRoot(t), "config", "local.yaml"), "--config", override},
		[]string{"ERNIC_RUN_DIR=" + runDir}, nil, true)

	// The fixture files do not change, so once both exporters have the
	// same scrape they serve the same values (uptime gauges move with the
	// clock: compared within a second).
	var diffs []string
	deadline := time.Now().Add(waitTimeout)
	for {
		select {
		case <-c.Exited():
			t.Fatalf("collector exited: %v", c.Err())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		text, err1 := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", textPort))
		contrib, err2 := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", contribPort))
		cancel()
		if err1 == nil && err2 == nil && len(text) > 0 {
			if diffs = compareFamilies(text, contrib); len(diffs) == 0 {
				n := 0
				for _, f := range text {
					n += len(f.Metric)
				}
				t.Logf("both exporters serve the same %d families and %d series", len(text), n)
				return
			}
		} else {
			diffs = []string{fmt.Sprintf("scrape: %v %v (%d families)", err1, err2, len(text))}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus_text and contrib's prometheus differ:\n  %s", strings.Join(diffs, "\n  "))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// compareFamilies lists how a and b differ.
func compareFamilies(a, b map[string]*dto.MetricFamily) []string {
	var out []string
	for name, fa := range a {
		fb, ok := b[name]
		if !ok {
			out = append(out, "only in prometheus_text: "+name)
			continue
		}
		if fa.GetType() != fb.GetType() || fa.GetHelp() != fb.GetHelp() {
			out = append(out, fmt.Sprintf("%s: type/help %v %q vs %v %q", name, fa.GetType(), fa.GetHelp(), fb.GetType(), fb.GetHelp()))
		}
		va, vb := seriesValues(fa), seriesValues(contribIdentifying(fb))
		for k, x := range va {
			y, ok := vb[k]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s%s only in prometheus_text", name, k))
			case strings.HasSuffix(name, "_seconds") && strings.Contains(name, "uptime"):
				if d := x - y; d > 1.5 || d < -1.5 {
					out = append(out, fmt.Sprintf("%s%s: %v vs %v", name, k, x, y))
				}
			case x != y:
				out = append(out, fmt.Sprintf("%s%s: %v vs %v", name, k, x, y))
			}
		}
		for k := range vb {
			if _, ok := va[k]; !ok {
				out = append(out, fmt.Sprintf("%s%s only in contrib's prometheus", name, k))
			}
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			out = append(out, "only in contrib's prometheus: "+name)
		}
	}
	slices.Sort(out)
	return out
}

// contribIdentifying returns f without the job and service_name labels
// that contrib's exporter makes of a resource's service.name (only the
// selftelemetry receiver's resource has one): prometheus_text leaves the
// identifying attributes to the scrape, as Prometheus' OTLP translation
// does.
func contribIdentifying(f *dto.MetricFamily) *dto.MetricFamily {
	out := &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type}
	for _, m := range f.Metric {
		c := &dto.Metric{Gauge: m.Gauge, Counter: m.Counter, Untyped: m.Untyped, Summary: m.Summary, Histogram: m.Histogram}
		for _, l := range m.GetLabel() {
			if n := l.GetName(); n != "job" && n != "service_name" {
				c.Label = append(c.Label, l)
			}
		}
		out.Metric = append(out.Metric, c)
	}
	return out
}

// seriesValues maps each series' sorted label set to its value.
func seriesValues(f *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.Metric {
		out[labelString(m)] = sampleValue(m, f.GetType())
	}
	return out
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package dashboards

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The checks that need promtool (Debian's package prometheus, 2.42, which
// .ci/run installs; or PROMTOOL_BIN). Behind the e2e tag like the other
// tests that need a program besides Go; `make test` runs them and fails,
// never skips, without promtool.

func promtool(t *testing.T) string {
	t.Helper()
	p, err := Promtool()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPromtoolCheckRules: `promtool check rules` accepts the shipped rules
// and their scaled test copy.
func TestPromtoolCheckRules(t *testing.T) {
	pt := promtool(t)
	_, rules, _ := loadAll(t)
	out, err := CheckRules(pt, filepath.Join(root(t), RulesPath))
	if err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", RulesPath, err, out)
	}
	t.Logf("%s", strings.TrimSpace(out))
	scaled, err := rules.Scaled(20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := scaled.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "alerts-scaled.yaml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := CheckRules(pt, f); err != nil {
		t.Fatalf("promtool check rules of the scaled copy: %v\n%s\n%s", err, out, b)
	}
}

// ruleTests is the part of a promtool test file this test reads.
type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// TestPromtoolTestRules: `promtool test rules` passes on
// testdata/alerts_test.yml, whose tests load dashboards/alerts.yaml and, for
// every alert, expect it firing at some time and not firing at a later one
// (resolved).
func TestPromtoolTestRules(t *testing.T) {
	pt := promtool(t)
	_, rules, _ := loadAll(t)
	path := filepath.Join(root(t), RuleTestsPath)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rt ruleTests
	if err := yaml.Unmarshal(b, &rt); err != nil {
		t.Fatal(err)
	}
	if len(rt.RuleFiles) != 1 || filepath.Clean(filepath.Join(filepath.Dir(path), rt.RuleFiles[0])) != filepath.Join(root(t), RulesPath) {
		t.Errorf("%s: rule_files %v, want the shipped %s", RuleTestsPath, rt.RuleFiles, RulesPath)
	}
	// Per alert: the tests that see it firing and, after that, resolved.
	fired, resolved := map[string]int{}, map[string]int{}
	for _, tc := range rt.Tests {
		firing := map[string]bool{}
		for _, a := range tc.AlertRuleTest {
			switch {
			case len(a.ExpAlerts) > 0:
				firing[a.Alertname] = true
			case firing[a.Alertname]:
				delete(firing, a.Alertname)
				fired[a.Alertname]++
				resolved[a.Alertname]++
			}
		}
		for name := range firing {
			fired[name]++
		}
	}
	for _, r := range rules.Alerts() {
		if fired[r.Alert] == 0 || resolved[r.Alert] == 0 {
			t.Errorf("%s: %d tests see it fire, %d see it fire then resolve; want both", r.Alert, fired[r.Alert], resolved[r.Alert])
		}
	}

	cmd := []string{"test", "rules", filepath.Base(path)}
	out, err := runIn(pt, filepath.Dir(path), cmd...)
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(cmd, " "), err, out)
	}
	t.Logf("promtool %s: %s; fire/resolve cases per alert: %v", strings.Join(cmd, " "), strings.TrimSpace(out), fired)
}

// TestPromtoolParsesDashboard: every PromQL expression of the dashboard
// (targets, annotations, variable selectors, with Grafana's variables
// replaced) and every PromQL example of docs/dashboards.md parses: each becomes a
// recording rule of a temporary file that `promtool check rules` must
// accept.
func TestPromtoolParsesDashboard(t *testing.T) {
	pt := promtool(t)
	d, _, _ := loadAll(t)
	var exprs []NamedExpr
	for _, q := range d.Queries {
		e, err := Substitute(q.Expr, Vars{RateInterval: "20s", Interval: "10s", Range: "1h"})
		if err != nil {
			t.Fatal(err)
		}
		exprs = append(exprs, NamedExpr{q.Where, e})
	}
	for i, e := range readmeExamples(t) {
		exprs = append(exprs, NamedExpr{fmt.Sprintf("documented example %d", i+1), e})
	}
	b, err := RecordingRules(exprs)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-exprs.yaml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := CheckRules(pt, f)
	if err != nil {
		t.Fatalf("promtool check rules on the dashboard's expressions: %v\n%s", err, out)
	}
	kinds := map[QueryKind]int{}
	for _, q := range d.Queries {
		kinds[q.Kind]++
	}
	if !slices.Contains([]int{kinds[Target], kinds[Annotation], kinds[Variable]}, 0) {
		t.Logf("%d expressions parse: %d panel targets, %d annotations, %d variable selectors, %d documented examples",
			len(exprs), kinds[Target], kinds[Annotation], kinds[Variable], len(exprs)-len(d.Queries))
	} else {
		t.Errorf("queries by kind %v: a kind is missing", kinds)
	}
}

// runIn runs name with args in dir and returns its combined output.
func runIn(name, dir string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

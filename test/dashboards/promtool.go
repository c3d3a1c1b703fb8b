// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"fmt"
	"os"
	"os/exec"
)

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

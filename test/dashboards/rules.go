// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"
)

// ---------------------------------------------------------------------------
// The dashboards' documentation.

// DashboardsDoc returns the text of the dashboards' documentation at path
// (docs/dashboards.md), which must open with its "# Dashboard and alerts"
// title.
func DashboardsDoc(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(b)
	if !strings.HasPrefix(s, "# Dashboard and alerts\n") {
		return "", fmt.Errorf(`%s does not open with "# Dashboard and alerts"`, path)
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

// offsetRE matches an offset modifier: offset 1h, offset -5m.
var offsetRE = regexp.MustCompile(`\boffset(\s+)(-?)([0-9][0-9a-z]*)`)

// Scaled returns a copy of f in which time runs factor times faster: every
// `for:`, range or subquery duration and offset is divided by factor
// (rounded up to a whole second). Numeric thresholds and the evaluating
// Prometheus's lookback are not scaled (use --query.lookback-delta); an
// expression with `@` is refused.
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
			if code := stripStrings(r.Expr); strings.Contains(code, "@") {
				return nil, fmt.Errorf("rule %s: @ is not scaled; extend Scaled", name)
			}
			var serr error
			r.Expr = replaceOutsideStrings(r.Expr, offsetRE, func(s string) string {
				m := offsetRE.FindStringSubmatch(s)
				off, err := scale(m[3])
				if err != nil {
					serr = err
					return s
				}
				return "offset" + m[1] + m[2] + off
			})
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

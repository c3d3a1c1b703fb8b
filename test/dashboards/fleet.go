// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// FleetPath is the fleet profile's overlay, relative to the repository root.
const FleetPath = "config/fleet.yaml"

// FleetNote is what the description of every panel that needs per-QP
// series says, so that a fleet's user knows where the detail went.
const FleetNote = "Per-QP series are on each host's :9840 endpoint when the fleet profile is on"

// FleetDropped returns the OTel names of the metrics the fleet profile's
// filter (processors: filter/fleet) drops from the push pipeline.
func FleetDropped(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Processors map[string]struct {
			Metrics struct {
				Exclude struct {
					MatchType   string   `yaml:"match_type"`
					MetricNames []string `yaml:"metric_names"`
				} `yaml:"exclude"`
			} `yaml:"metrics"`
		} `yaml:"processors"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p, ok := f.Processors["filter/fleet"]
	if !ok {
		return nil, fmt.Errorf("%s: no filter/fleet processor", path)
	}
	if p.Metrics.Exclude.MatchType != "strict" {
		return nil, fmt.Errorf("%s: filter/fleet: match_type %q, want strict (names as written)", path, p.Metrics.Exclude.MatchType)
	}
	return p.Metrics.Exclude.MetricNames, nil
}

// PerQPRefs returns the per-QP metrics expr refers to.
func (n *Names) PerQPRefs(expr string) []string {
	var out []string
	for _, m := range n.MetricRefs(expr) {
		if n.PerQP[m] {
			out = append(out, m)
		}
	}
	return out
}

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

// FleetReceiver is the fleet profile's receiver, that of the push pipeline.
const FleetReceiver = "ernic/fleet"

// FleetDisabled returns the OTel names of the metrics the fleet profile's
// push receiver (FleetReceiver) turns off.
func FleetDisabled(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Receivers map[string]struct {
			Metrics map[string]struct {
				Enabled *bool `yaml:"enabled"`
			} `yaml:"metrics"`
		} `yaml:"receivers"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, ok := f.Receivers[FleetReceiver]
	if !ok {
		return nil, fmt.Errorf("%s: no %s receiver", path, FleetReceiver)
	}
	var off []string
	for name, m := range r.Metrics {
		if m.Enabled == nil || *m.Enabled {
			return nil, fmt.Errorf("%s: %s: metric %s is not turned off", path, FleetReceiver, name)
		}
		off = append(off, name)
	}
	return off, nil
}

// PerQPRefs returns the per-QP metrics expr refers to.
func (n *Names) PerQPRefs(expr string) []string { return n.refsIn(expr, n.PerQP) }

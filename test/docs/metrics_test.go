// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package docs checks the repository's user documentation against the
// definitions it describes.
package docs

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The metric table of docs/metrics.md lists exactly the metrics of the receiver's
// metadata.yaml, so the user-facing table cannot drift from the definitions.
func TestMetricTableMatchesMetadata(t *testing.T) {
	raw, err := os.ReadFile("../../receiver/ernicreceiver/metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Metrics map[string]any `yaml:"metrics"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	var defined []string
	for name := range md.Metrics {
		defined = append(defined, name)
	}
	slices.Sort(defined)

	readme, err := os.ReadFile("../../docs/metrics.md")
	require.NoError(t, err)
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(ernic\\.[a-z_.]+)`").FindAllSubmatch(readme, -1) {
		listed = append(listed, string(m[1]))
	}
	slices.Sort(listed)
	assert.Equal(t, defined, listed)
}

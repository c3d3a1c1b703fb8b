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

// The metric tables of docs/metrics.md list exactly the metrics of the
// receivers' metadata.yaml (the ernic receiver's, and the selftelemetry
// receiver's in Delivery telemetry), so the user-facing tables cannot drift
// from the definitions.
func TestMetricTableMatchesMetadata(t *testing.T) {
	readme, err := os.ReadFile("../../docs/metrics.md")
	require.NoError(t, err)
	for metadata, prefix := range map[string]string{
		"../../receiver/ernicreceiver/metadata.yaml":         "ernic",
		"../../receiver/selftelemetryreceiver/metadata.yaml": "otelcol",
	} {
		raw, err := os.ReadFile(metadata)
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
		require.NotEmpty(t, defined, metadata)

		var listed []string
		for _, m := range regexp.MustCompile("(?m)^\\| `("+prefix+"\\.[a-z_.]+)`").FindAllSubmatch(readme, -1) {
			listed = append(listed, string(m[1]))
		}
		slices.Sort(listed)
		assert.Equal(t, defined, listed, metadata)
	}
}

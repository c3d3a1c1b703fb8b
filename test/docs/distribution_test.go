// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// Every component of this repository lists no distribution in its
// metadata.yaml (mdatagen links only the OpenTelemetry project's), says in
// its README that otelcol-ernic ships it, and is in builder-config.yaml.
func TestComponentsShipInThisDistribution(t *testing.T) {
	manifest, err := os.ReadFile("../../builder-config.yaml")
	require.NoError(t, err)
	shipped := regexp.MustCompile(`(?m)^\s*-?\s*(?:gomod|import): (\S+)`).FindAllStringSubmatch(string(manifest), -1)
	var paths []string
	for _, m := range shipped {
		paths = append(paths, m[1])
	}
	says := regexp.MustCompile(`(?m)^(?:\| )?Distributions:? \|? ?otelcol-ernic, this repository's`)
	for _, dir := range []string{
		"receiver/ernicreceiver",
		"receiver/selftelemetryreceiver",
		"exporter/remotewriteexporter",
		"exporter/prometheustextexporter",
		"exporter/otlpdurableexporter",
		"exporter/otlphttpdurableexporter",
		"extension/queuestorageextension",
	} {
		t.Run(dir, func(t *testing.T) {
			raw, err := os.ReadFile("../../" + dir + "/metadata.yaml")
			require.NoError(t, err)
			var md struct {
				Status struct {
					Distributions *[]string `yaml:"distributions"`
				} `yaml:"status"`
			}
			require.NoError(t, yaml.Unmarshal(raw, &md))
			require.NotNil(t, md.Status.Distributions, "metadata.yaml has no status::distributions")
			assert.Empty(t, *md.Status.Distributions, "metadata.yaml: a distribution mdatagen has no link for")

			readme, err := os.ReadFile("../../" + dir + "/README.md")
			require.NoError(t, err)
			assert.Regexp(t, says, string(readme), "the README does not say that otelcol-ernic ships it")

			assert.Contains(t, paths, "github.com/rocm-ernic/otelcol-ernic/"+dir, "builder-config.yaml")
		})
	}
}

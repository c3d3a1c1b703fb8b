// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"
)

// The receiver's README documents every setting of its configuration, and
// no other: its table's keys are the top-level keys of the default config.
func TestReceiverREADMEConfigTableMatchesConfig(t *testing.T) {
	conf := confmap.New()
	require.NoError(t, conf.Marshal(ernicreceiver.NewFactory().CreateDefaultConfig()))
	var keys []string
	for k := range conf.ToStringMap() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	require.Contains(t, keys, "run_dir")
	require.Contains(t, keys, "collection_interval")

	readme, err := os.ReadFile("../../receiver/ernicreceiver/README.md")
	require.NoError(t, err)
	var documented []string
	for _, row := range regexp.MustCompile("(?m)^\\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|").FindAllSubmatch(readme, -1) {
		for _, k := range regexp.MustCompile("`([a-z_]+)`").FindAllSubmatch(row[1], -1) {
			documented = append(documented, string(k[1]))
		}
	}
	slices.Sort(documented)
	assert.Equal(t, keys, documented)
}

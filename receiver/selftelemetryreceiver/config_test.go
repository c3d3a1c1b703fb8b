// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package selftelemetryreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// The push configs' settings load; a collection_interval under a second
// is refused with the fix, as an unknown key is.
func TestConfig(t *testing.T) {
	load := func(raw map[string]any) (*Config, error) {
		cfg := createDefaultConfig().(*Config)
		if err := confmap.NewFromStringMap(raw).Unmarshal(cfg); err != nil {
			return nil, err
		}
		return cfg, cfg.Validate()
	}
	cfg, err := load(map[string]any{
		"host_name":           "gpu-host-7",
		"resource_attributes": map[string]any{"host.name": map[string]any{"enabled": true}},
	})
	require.NoError(t, err)
	assert.Equal(t, "gpu-host-7", cfg.HostName)
	assert.True(t, cfg.ResourceAttributes.HostName.Enabled)
	assert.Equal(t, 15*time.Second, cfg.CollectionInterval)

	_, err = load(map[string]any{"collection_interval": "500ms"})
	assert.ErrorContains(t, err, `"collection_interval" is 500ms: it must be at least 1s (write a unit, e.g. 15s)`)
	_, err = load(map[string]any{"host": "x"})
	assert.ErrorContains(t, err, "invalid keys: host")
}

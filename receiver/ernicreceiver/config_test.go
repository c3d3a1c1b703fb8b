// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.Equal(t, "/run/rocm-ernic", cfg.RunDir)
	assert.Equal(t, "/proc", cfg.ProcDir)
	assert.Equal(t, 5*time.Second, cfg.CollectionInterval, "the legacy exporter's interval")
	assert.Equal(t, 1024, cfg.MaxQPsPerInstance)
	assert.Equal(t, 256, cfg.MaxInstances)
	assert.Equal(t, int64(64<<20), cfg.MaxFileBytes)
	assert.Equal(t, 128, cfg.MaxLabelLength)
	assert.False(t, cfg.GCAfterScrape, "off by default: it collects the whole process's heap")
	assert.Equal(t, time.Minute, cfg.UnhealthyAfter, "rocm-ernic may start a little after the collector")
	assert.True(t, cfg.Metrics.ErnicCommands.Enabled)
	assert.False(t, cfg.Metrics.ErnicQpWqesByOpcode.Enabled, "off by default: cardinality")
	assert.True(t, cfg.Metrics.ErnicStatsAge.Enabled)
}

func TestConfigCustom(t *testing.T) {
	cfg, err := loadConfig(t, "custom")
	require.NoError(t, err)
	assert.Equal(t, "/srv/ernic/run", cfg.RunDir)
	assert.Equal(t, "/host/proc", cfg.ProcDir)
	assert.Equal(t, time.Second, cfg.CollectionInterval)
	assert.Equal(t, 0, cfg.MaxQPsPerInstance)
	assert.Equal(t, 0, cfg.MaxInstances)
	assert.Equal(t, int64(1<<20), cfg.MaxFileBytes)
	assert.True(t, cfg.GCAfterScrape)
	assert.Equal(t, 15*time.Second, cfg.UnhealthyAfter)
	assert.True(t, cfg.Metrics.ErnicQpWqesByOpcode.Enabled)
	assert.False(t, cfg.Metrics.ErnicStatsAge.Enabled)
}

func TestConfigInvalid(t *testing.T) {
	_, err := loadConfig(t, "bad")
	require.Error(t, err)
	for _, want := range []string{
		`"run_dir" must not be empty`,
		`"proc_dir" must not be empty`,
		`"max_qps_per_instance" is -1: it must be 0 (no limit) or a positive number of QPs`,
		`"max_instances" is -2: it must be 0 (no limit) or a positive number of instances`,
		`"max_file_bytes" is 0: it must be a positive number of bytes`,
		`"max_label_length" is 3: it must be at least 16 bytes (default 128)`,
		`"unhealthy_after" is -5s: it must be 0 (report at once) or a positive duration (default 1m0s)`,
	} {
		assert.ErrorContains(t, err, want)
	}

	_, err = loadConfig(t, "zero_interval")
	require.ErrorContains(t, err, `"collection_interval": requires positive value`)

	_, err = loadConfig(t, "unknown_key")
	require.ErrorContains(t, err, "run_directory")
}

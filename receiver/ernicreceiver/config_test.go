// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

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

// configErrorCase is one invalid receiver configuration: the YAML under
// `ernic:` and what its error must say.
type configErrorCase struct {
	name string
	// yaml is the receiver's configuration; %PROC% is replaced by a
	// directory made for the case (see procDir).
	yaml string
	// procDir, when set, makes the directory named by %PROC% ("empty": an
	// empty directory; "file": a regular file; "stat-dir": a directory whose
	// stat is a directory, so that <proc_dir>/stat cannot be read).
	procDir string
	// stage is where the error shows: "unmarshal" (decoding the YAML),
	// "validate" (Config.Validate and the embedded settings' checks), or
	// "start" (the receiver's Start: proc_dir is only opened then).
	stage string
	// key must appear in the message; fix is a phrase of the message that
	// tells how to correct it. An empty fix marks a message that has none
	// yet (reported to the lead): the test then checks the key only.
	key, fix string
}

var configErrorCases = []configErrorCase{
	{name: "empty run_dir", yaml: `run_dir: ""`, stage: "validate",
		key: `"run_dir"`, fix: "set it to the rocm-ernic run directory (default /run/rocm-ernic)"},
	{name: "null run_dir", yaml: `run_dir:`, stage: "validate",
		key: `"run_dir"`, fix: "set it to the rocm-ernic run directory (default /run/rocm-ernic)"},
	{name: "empty proc_dir", yaml: `proc_dir: ""`, stage: "validate",
		key: `"proc_dir"`, fix: "set it to the host's proc filesystem (default /proc)"},
	{name: "zero collection_interval", yaml: `collection_interval: 0s`, stage: "validate",
		key: `"collection_interval"`, fix: ""},
	{name: "negative collection_interval", yaml: `collection_interval: -5s`, stage: "validate",
		key: `"collection_interval"`, fix: ""},
	{name: "bare-number collection_interval", yaml: `collection_interval: 5`, stage: "validate",
		key: `"collection_interval" is 5ns`, fix: "write a unit, e.g. 5s"},
	{name: "whitespace run_dir", yaml: `run_dir: "  "`, stage: "validate",
		key: `"run_dir"`, fix: "set it to the rocm-ernic run directory (default /run/rocm-ernic)"},
	{name: "negative timeout", yaml: `timeout: -1s`, stage: "validate",
		key: `"timeout"`, fix: ""},
	{name: "negative max_qps_per_instance", yaml: `max_qps_per_instance: -1`, stage: "validate",
		key: `"max_qps_per_instance"`, fix: "it must be 0 (no limit) or a positive number of QPs"},
	{name: "negative max_instances", yaml: `max_instances: -1`, stage: "validate",
		key: `"max_instances"`, fix: "it must be 0 (no limit) or a positive number of instances"},
	{name: "negative max_file_bytes", yaml: `max_file_bytes: -4096`, stage: "validate",
		key: `"max_file_bytes"`, fix: "it must be a positive number of bytes (default 67108864)"},
	{name: "zero max_file_bytes", yaml: `max_file_bytes: 0`, stage: "validate",
		key: `"max_file_bytes"`, fix: "it must be a positive number of bytes (default 67108864)"},
	{name: "negative unhealthy_after", yaml: `unhealthy_after: -1m`, stage: "validate",
		key: `"unhealthy_after" is -1m0s`, fix: "it must be 0 (report at once) or a positive duration (default 1m0s)"},
	{name: "unknown key", yaml: `run_directory: /run/rocm-ernic`, stage: "unmarshal",
		key: "run_directory", fix: ""},
	{name: "unknown metric", yaml: "metrics:\n  ernic.no.such.metric:\n    enabled: true", stage: "unmarshal",
		key: "ernic.no.such.metric", fix: ""},
	{name: "non-number max_qps_per_instance", yaml: `max_qps_per_instance: lots`, stage: "unmarshal",
		key: "max_qps_per_instance", fix: ""},
	{name: "unit in max_file_bytes", yaml: `max_file_bytes: 64MiB`, stage: "unmarshal",
		key: "max_file_bytes", fix: ""},
	{name: "non-duration collection_interval", yaml: `collection_interval: fast`, stage: "unmarshal",
		key: "collection_interval", fix: ""},
	{name: "list for run_dir", yaml: `run_dir: [/run/a, /run/b]`, stage: "unmarshal",
		key: "run_dir", fix: ""},
	{name: "number for metrics", yaml: `metrics: 5`, stage: "unmarshal",
		key: "metrics", fix: ""},
	{name: "string for enabled", yaml: "metrics:\n  ernic.commands:\n    enabled: maybe", stage: "unmarshal",
		key: "enabled", fix: ""},
	{name: "nonexistent proc_dir", yaml: `proc_dir: /nonexistent/proc`, stage: "start",
		key: "proc_dir", fix: "set proc_dir to the host's proc filesystem"},
	{name: "proc_dir without stat", yaml: `proc_dir: %PROC%`, procDir: "empty", stage: "start",
		key: "proc_dir", fix: "set proc_dir to the host's proc filesystem"},
	{name: "proc_dir a file", yaml: `proc_dir: %PROC%`, procDir: "file", stage: "start",
		key: "proc_dir", fix: "set proc_dir to the host's proc filesystem"},
	{name: "proc_dir stat unreadable", yaml: `proc_dir: %PROC%`, procDir: "stat-dir", stage: "start",
		key: "proc_dir", fix: "set proc_dir to the host's proc filesystem"},
}

// makeProcDir makes the proc_dir of a case and returns its path.
func makeProcDir(t *testing.T, kind string) string {
	t.Helper()
	dir := t.TempDir()
	switch kind {
	case "empty":
		return dir
	case "file":
		p := filepath.Join(dir, "proc")
		require.NoError(t, os.WriteFile(p, []byte("not a directory\n"), 0o644))
		return p
	case "stat-dir":
		require.NoError(t, os.Mkdir(filepath.Join(dir, "stat"), 0o755))
		return dir
	}
	t.Fatalf("unknown procDir kind %q", kind)
	return ""
}

// configError loads yaml as the `ernic` receiver's configuration the way the
// collector does (defaults, then the file, then validation), starts the
// receiver when that succeeds, and returns the stage that failed and its
// error.
func configError(t *testing.T, yaml string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	indented := "  " + strings.ReplaceAll(yaml, "\n", "\n  ")
	require.NoError(t, os.WriteFile(path, []byte("ernic:\n"+indented+"\n"), 0o644))
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	sub, err := cm.Sub(metadata.Type.String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return "unmarshal", err
	}
	if err := confmap.Validate(cfg); err != nil {
		return "validate", err
	}
	rcv, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		return "create", err
	}
	err = rcv.Start(context.Background(), componenttest.NewNopHost())
	require.NoError(t, rcv.Shutdown(context.Background()))
	if err != nil {
		return "start", err
	}
	return "", nil
}

// TestConfigErrorMessages: each invalid configuration fails at the expected
// stage with a message that names the key and, where the receiver writes the
// message, how to fix it.
func TestConfigErrorMessages(t *testing.T) {
	for _, tc := range configErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			yaml := tc.yaml
			if tc.procDir != "" {
				yaml = strings.ReplaceAll(yaml, "%PROC%", makeProcDir(t, tc.procDir))
			}
			stage, err := configError(t, yaml)
			require.Error(t, err, "configuration accepted:\n%s", yaml)
			msg := err.Error()
			t.Logf("%s: %s", stage, msg)
			assert.Equal(t, tc.stage, stage, "stage of %q", msg)
			assert.Contains(t, msg, tc.key, "the message must name the key")
			if tc.fix != "" {
				assert.Contains(t, msg, tc.fix, "the message must tell the fix")
			}
		})
	}
}

// The valid neighbours of the invalid cases are accepted and start, so that
// the cases above fail for the reason they name.
func TestConfigErrorNeighboursValid(t *testing.T) {
	procDir := filepath.Join("testdata", "proc", "basic")
	for _, yaml := range []string{
		`run_dir: /run/rocm-ernic`,
		`collection_interval: 100ms`,
		`timeout: 0s`,
		`max_qps_per_instance: 0`,
		`max_file_bytes: 1`,
		"metrics:\n  ernic.commands:\n    enabled: false",
	} {
		stage, err := configError(t, yaml+"\nproc_dir: "+procDir)
		assert.NoError(t, err, "%s (%s)", yaml, stage)
	}
}

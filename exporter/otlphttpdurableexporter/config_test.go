// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configcompression"
	_ "go.opentelemetry.io/collector/config/configgrpc" // registers snappy, a stored compression
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter/internal/metadata"
)

func settings() exporter.Settings { return exportertest.NewNopSettings(metadata.Type) }

func itoa(n int) string { return strconv.Itoa(n) }

func isPermanent(err error) bool { return consumererror.IsPermanent(err) }

// Each setting this exporter cannot honour is refused with its reason.
func TestValidate(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"no endpoint":     {func(c *Config) { c.Endpoint = "" }, "endpoint: the OTLP/HTTP server's base URL"},
		"host:port":       {func(c *Config) { c.Endpoint = "127.0.0.1:4318" }, "must be an http:// or https:// URL"},
		"bad metrics URL": {func(c *Config) { c.MetricsEndpoint = "ftp://x/v1/metrics" }, `metrics_endpoint "ftp://x/v1/metrics"`},
		"snappy":          {func(c *Config) { c.Compression = configcompression.TypeSnappy }, `compression "snappy": not supported (gzip, zstd or none)`},
		"level":           {func(c *Config) { c.CompressionParams.Level = 9 }, "compression_params::level 9: not supported"},
		"json":            {func(c *Config) { c.Encoding = "json" }, `encoding "json": not supported`},
		"query":           {func(c *Config) { c.Endpoint = "http://h:4318?x=1" }, `endpoint "http://h:4318?x=1": a base URL without query or fragment`},
		"window, no queue": {func(c *Config) {
			c.MergeWindow = time.Second
			c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		}, "merge_window: needs the sending queue"},
		"negative window":   {func(c *Config) { c.MergeWindow = -time.Second }, "merge_window -1s"},
		"the queue's batch": {func(c *Config) { c.QueueConfig.Get().Batch = configoptional.Some(exporterhelper.BatchConfig{}) }, "sending_queue::batch: not supported"},
	} {
		cfg := testConfig("http://127.0.0.1:4318")
		c.edit(cfg)
		err := cfg.Validate()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
	cfg := testConfig("https://otlp.example:4318/")
	require.NoError(t, cfg.Validate())
	u, err := cfg.metricsURL()
	require.NoError(t, err)
	assert.Equal(t, "https://otlp.example:4318/v1/metrics", u.String())
	cfg.Compression = "none"
	require.NoError(t, cfg.Validate())
	// What config/otlphttp.yaml set for otlp_http is taken: level 1, proto.
	cfg.Compression, cfg.CompressionParams.Level, cfg.Encoding = configcompression.TypeGzip, 1, "proto"
	require.NoError(t, cfg.Validate())
	cfg.MetricsEndpoint = "http://127.0.0.1:4318/otlp/metrics?tenant=a"
	u, err = cfg.metricsURL()
	require.NoError(t, err)
	assert.Equal(t, cfg.MetricsEndpoint, u.String(), "metrics_endpoint as it is")
	// createMetrics refuses what Validate refuses, for a caller that skipped it.
	cfg.Compression = configcompression.TypeDeflate
	_, err = createMetrics(context.Background(), settings(), cfg)
	require.ErrorContains(t, err, `compression "deflate"`)
}

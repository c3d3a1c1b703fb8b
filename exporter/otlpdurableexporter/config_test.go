// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Each setting this exporter cannot honour is refused with its reason.
func TestValidate(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"no endpoint":     {func(c *Config) { c.Endpoint = "" }, "endpoint: the OTLP/gRPC server's host:port is required"},
		"negative window": {func(c *Config) { c.MergeWindow = -time.Second }, "merge_window -1s: must not be negative"},
		"window, no queue": {func(c *Config) {
			c.MergeWindow = time.Second
			c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		}, "merge_window: needs the sending queue"},
		"the queue's batch": {func(c *Config) { c.QueueConfig.Get().Batch = configoptional.Some(exporterhelper.BatchConfig{}) }, "sending_queue::batch: not supported"},
	} {
		cfg := testConfig("127.0.0.1:4317")
		require.NoError(t, cfg.Validate(), name)
		c.edit(cfg)
		require.ErrorContains(t, cfg.Validate(), c.want, name)
	}
	cfg := testConfig("127.0.0.1:4317")
	cfg.MergeWindow = time.Second
	require.NoError(t, cfg.Validate())
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter/internal/metadata"
)

// NewFactory returns the factory of the otlp_http_durable exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

// createDefaultConfig gives otlp_http's defaults.
func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 30 * time.Second
	client.Compression = configcompression.TypeGzip
	client.WriteBufferSize = 512 * 1024
	queue := exporterhelper.NewDefaultQueueConfig()
	// A full queue waits for room; while sending fails the oldest batch
	// makes it (pushqueue), never the newest.
	queue.BlockOnOverflow = true
	// Unsupported batcher, on by default under pkg.exporterhelper.queueBatchEnabled.
	queue.Batch = configoptional.None[exporterhelper.BatchConfig]()
	return &Config{
		ClientConfig: client,
		QueueConfig:  configoptional.Some(queue),
		RetryConfig:  configretry.NewDefaultBackOffConfig(),
	}
}

func createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	return newExporter(ctx, set, cfg.(*Config))
}

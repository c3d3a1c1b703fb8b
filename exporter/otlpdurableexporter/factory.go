// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter/internal/metadata"
)

// NewFactory returns the factory of the otlp_durable exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

// createDefaultConfig gives otlp_grpc's defaults.
func createDefaultConfig() component.Config {
	client := configgrpc.NewDefaultClientConfig()
	client.Compression = configcompression.TypeGzip
	client.WriteBufferSize = 512 * 1024
	client.Keepalive = configoptional.None[configgrpc.KeepaliveClientConfig]()
	queue := exporterhelper.NewDefaultQueueConfig()
	// A full queue waits for room; while sending fails the oldest batch
	// makes it (pushqueue), never the newest.
	queue.BlockOnOverflow = true
	// Unsupported batcher, on by default under pkg.exporterhelper.queueBatchEnabled.
	queue.Batch = configoptional.None[exporterhelper.BatchConfig]()
	return &Config{
		ClientConfig:  client,
		TimeoutConfig: exporterhelper.NewDefaultTimeoutConfig(),
		QueueConfig:   configoptional.Some(queue),
		RetryConfig:   configretry.NewDefaultBackOffConfig(),
	}
}

func createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	return newExporter(ctx, set, cfg.(*Config))
}

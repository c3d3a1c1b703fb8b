// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// NewFactory returns the factory of the remote_write exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 30 * time.Second // Prometheus' remote_timeout
	retry := configretry.NewDefaultBackOffConfig()
	retry.MaxElapsedTime = 0 // until it goes through; the queue is the bound
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.NumConsumers = 1 // in order: Validate allows no other value
	queue.BlockOnOverflow = true
	tr := translator.DefaultSettings()
	return &Config{
		ClientConfig:                  client,
		QueueConfig:                   configoptional.Some(queue),
		BackOffConfig:                 retry,
		MaxBatchSizeBytes:             tr.MaxBatchSizeBytes,
		MaxSamplesPerSend:             tr.MaxSamplesPerSend,
		ProtobufMessage:               translator.MessageV1,
		ResourceToTelemetryConversion: promname.ResourceToTelemetrySettings{Enabled: tr.ResourceToTelemetryConversion},
	}
}

func createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	return newExporter(ctx, set, cfg.(*Config))
}

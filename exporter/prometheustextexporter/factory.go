// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter"

import (
	"context"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter/internal/metadata"
)

// NewFactory returns the factory of the prometheus_text exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		ServerConfig:                  confighttp.NewDefaultServerConfig(),
		MetricExpiration:              time.Minute,
		ResourceToTelemetryConversion: promname.ResourceToTelemetrySettings{Enabled: true},
	}
}

func createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	e := newExporter(set, cfg.(*Config))
	return exporterhelper.NewMetrics(ctx, set, cfg, e.ConsumeMetrics,
		exporterhelper.WithStart(e.Start),
		exporterhelper.WithShutdown(e.Shutdown),
		exporterhelper.WithCapabilities(e.Capabilities()),
		// Keeping a batch cannot fail or take time: no timeout, no queue.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{}),
	)
}

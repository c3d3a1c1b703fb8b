// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// defaultCollectionInterval is the legacy ernic-exporter's scrape interval.
const defaultCollectionInterval = 5 * time.Second

// NewFactory returns the factory of the ernic receiver (type "ernic").
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(createMetricsReceiver, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = defaultCollectionInterval
	return &Config{
		ControllerConfig:     cc,
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		RunDir:               DefaultRunDir,
		ProcDir:              DefaultProcDir,
		MaxQPsPerInstance:    DefaultMaxQPsPerInstance,
		MaxInstances:         DefaultMaxInstances,
		MaxFileBytes:         DefaultMaxFileBytes,
		MaxLabelLength:       DefaultMaxLabelLength,
		UnhealthyAfter:       DefaultUnhealthyAfter,
	}
}

func createMetricsReceiver(
	_ context.Context,
	set receiver.Settings,
	cfg component.Config,
	next consumer.Metrics,
) (receiver.Metrics, error) {
	return newReceiver(cfg.(*Config), set, next)
}

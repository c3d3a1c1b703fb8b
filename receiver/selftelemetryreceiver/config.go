// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package selftelemetryreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver"

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver/internal/metadata"
)

const (
	// DefaultCollectionInterval: the counts change slowly, and each
	// collection is about 16 series a push exporter in every host's queue.
	DefaultCollectionInterval = 15 * time.Second
	// MinCollectionInterval: a bare number is nanoseconds, and a faster
	// loop would only fill the queue with telemetry.
	MinCollectionInterval = time.Second
)

// Config is the configuration of the selftelemetry receiver.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// HostName is host.name when that attribute is enabled; empty:
	// os.Hostname, as the ernic receiver's host_name.
	HostName string `mapstructure:"host_name"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the receiver's own settings; the embedded controller and
// metrics settings validate themselves.
func (c *Config) Validate() error {
	if c.CollectionInterval > 0 && c.CollectionInterval < MinCollectionInterval {
		return fmt.Errorf(`"collection_interval" is %s: it must be at least %s (write a unit, e.g. 15s)`, c.CollectionInterval, MinCollectionInterval)
	}
	return nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter"

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
)

// Config is the prometheus_text exporter's configuration.
type Config struct {
	// ServerConfig is the HTTP server: endpoint, tls and confighttp's other
	// settings. Metrics are served at /metrics; every other path is 404.
	confighttp.ServerConfig `mapstructure:",squash"`

	// MetricExpiration is how long a resource's latest batch is served without
	// a newer one.
	MetricExpiration time.Duration `mapstructure:"metric_expiration"`

	// ResourceToTelemetryConversion makes resource attributes labels; on by
	// default, unlike contrib's, or the instances' series would collide.
	ResourceToTelemetryConversion promname.ResourceToTelemetrySettings `mapstructure:"resource_to_telemetry_conversion"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the endpoint and the expiration.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.NetAddr.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: the address to listen on is required (e.g. 0.0.0.0:9840)"))
	}
	if cfg.MetricExpiration <= 0 {
		errs = append(errs, fmt.Errorf("metric_expiration %v: must be positive", cfg.MetricExpiration))
	}
	return errors.Join(errs...)
}

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
	// ServerConfig is the HTTP server: endpoint (host:port to listen on,
	// e.g. 0.0.0.0:9840), tls, and the other confighttp server settings.
	// Metrics are served at /metrics; every other path is 404.
	confighttp.ServerConfig `mapstructure:",squash"`

	// MetricExpiration is how long a resource's latest batch is served
	// when no newer batch of that resource comes (the receiver stopped, or
	// the resource is gone). Default 1m.
	MetricExpiration time.Duration `mapstructure:"metric_expiration"`

	// ResourceToTelemetryConversion makes the resource attributes labels
	// of every series (contrib's setting of that name). On by default,
	// unlike contrib's prometheus exporter: the receiver's ernic.id and
	// role are resource attributes, and without them the series of the
	// instances would collide.
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

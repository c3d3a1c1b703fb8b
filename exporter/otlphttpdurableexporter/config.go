// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter"

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

	"errors"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Config is otlp_http's configuration for metrics, with merge_window (README.md).
type Config struct {
	// ClientConfig's compression_params::level may only be 1 or unset.
	confighttp.ClientConfig `mapstructure:",squash"`

	// MetricsEndpoint replaces endpoint + /v1/metrics.
	MetricsEndpoint string `mapstructure:"metrics_endpoint"`

	// Encoding may only be proto.
	Encoding string `mapstructure:"encoding"`

	// QueueConfig holds encoded, compressed requests; its batcher is not supported.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`

	// MergeWindow sends the batches that come within it as one request.
	MergeWindow time.Duration `mapstructure:"merge_window"`

	RetryConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// RetryOnAuthErrors retries what the server refuses as unauthenticated
	// or forbidden, which OTLP says not to: data waits for a credential fix.
	RetryOnAuthErrors bool `mapstructure:"retry_on_auth_errors"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the endpoints, the compression and the queue settings.
func (cfg *Config) Validate() error {
	var errs []error
	if _, err := cfg.metricsURL(); err != nil {
		errs = append(errs, err)
	}
	if _, err := cfg.compression(); err != nil {
		errs = append(errs, err)
	}
	if l := cfg.CompressionParams.Level; l != 0 && l != 1 {
		errs = append(errs, fmt.Errorf("compression_params::level %d: not supported; gzip is written at level 1, zstd at its fastest level (1)", l))
	}
	if cfg.Encoding != "" && cfg.Encoding != "proto" {
		errs = append(errs, fmt.Errorf("encoding %q: not supported; this exporter sends protobuf (proto)", cfg.Encoding))
	}
	errs = append(errs, pushqueue.ValidateQueue(cfg.MergeWindow, cfg.QueueConfig, "batches are encoded before the queue")...)
	return errors.Join(errs...)
}

// metricsURL is metrics_endpoint, or endpoint with /v1/metrics appended.
func (cfg *Config) metricsURL() (*url.URL, error) {
	raw, key := cfg.MetricsEndpoint, "metrics_endpoint"
	if raw == "" {
		if cfg.Endpoint == "" {
			return nil, errors.New("endpoint: the OTLP/HTTP server's base URL (or metrics_endpoint, the full URL) is required")
		}
		raw, key = cfg.Endpoint, "endpoint"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q: must be an http:// or https:// URL", key, raw)
	}
	if key == "endpoint" {
		if u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("endpoint %q: a base URL without query or fragment (/v1/metrics is appended to its path; metrics_endpoint takes a full URL)", raw)
		}
		u = u.JoinPath("v1", "metrics")
	}
	return u, nil
}

// compression is the name the queue stores and Content-Encoding sends ("": none).
func (cfg *Config) compression() (string, error) {
	switch t := cfg.Compression; {
	case !t.IsCompressed():
		return "", nil
	case t == configcompression.TypeGzip || t == configcompression.TypeZstd:
		return string(t), nil
	default:
		return "", fmt.Errorf("compression %q: not supported (gzip, zstd or none)", t)
	}
}

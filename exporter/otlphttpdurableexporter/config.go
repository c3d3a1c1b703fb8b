// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter"

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Config is the otlp_http_durable exporter's configuration; its keys are
// those of the collector's otlp_http exporter that apply to metrics.
type Config struct {
	// ClientConfig is the HTTP client: endpoint (the OTLP/HTTP server's
	// base URL; /v1/metrics is appended, as otlp_http does), tls, headers,
	// auth, timeout (each attempt to send one request; 30 s by default),
	// compression (gzip by default; zstd or none). compression_params is
	// not supported: gzip is written at level 1 (confighttp's default),
	// zstd at its fastest level.
	confighttp.ClientConfig `mapstructure:",squash"`

	// MetricsEndpoint, when set, is the full URL requests are POSTed to,
	// in place of endpoint + /v1/metrics.
	MetricsEndpoint string `mapstructure:"metrics_endpoint"`

	// QueueConfig is the collector's standard sending queue. With `storage`
	// set to a storage extension (file_storage) it is persistent and holds
	// each request encoded and compressed, as it is sent; its
	// `sizer: bytes` counts those bytes. `batch` is not supported: the
	// requests are encoded before the queue (merge_window joins batches).
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`

	// MergeWindow, when positive, sends the batches that come within it of
	// the first as one request (their encodings back to back, compressed
	// once), stored as one item of the queue: at most 2 MB of protobuf
	// before compression and half of queue_size; a larger batch goes
	// alone. 0 (the default) sends each batch as it comes. A batch waits
	// at most this long before it is in the queue: with a persistent
	// queue, what a crash can lose on top of what waits upstream.
	MergeWindow time.Duration `mapstructure:"merge_window"`

	// RetryConfig is how a failed request is retried (retry_on_failure).
	RetryConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the endpoints, the compression and the queue settings
// this exporter supports.
func (cfg *Config) Validate() error {
	var errs []error
	if _, err := cfg.metricsURL(); err != nil {
		errs = append(errs, err)
	}
	if _, err := cfg.compression(); err != nil {
		errs = append(errs, err)
	}
	if cfg.CompressionParams.Level != 0 {
		errs = append(errs, errors.New("compression_params: not supported; gzip is written at level 1, zstd at its fastest level"))
	}
	if cfg.MergeWindow < 0 {
		errs = append(errs, fmt.Errorf("merge_window %s: must not be negative", cfg.MergeWindow))
	}
	if cfg.QueueConfig.HasValue() && cfg.QueueConfig.Get().Batch.HasValue() {
		errs = append(errs, errors.New("sending_queue::batch: not supported by this exporter; batches are encoded before the queue (merge_window joins batches)"))
	}
	return errors.Join(errs...)
}

// metricsURL is where requests go: metrics_endpoint, or endpoint with
// /v1/metrics appended. An error when neither is an http(s) URL.
func (cfg *Config) metricsURL() (*url.URL, error) {
	raw, key := cfg.MetricsEndpoint, "metrics_endpoint"
	if raw == "" {
		if cfg.Endpoint == "" {
			return nil, errors.New("endpoint: the OTLP/HTTP server's base URL (or metrics_endpoint, the full URL) is required")
		}
		raw, key = strings.TrimSuffix(cfg.Endpoint, "/")+"/v1/metrics", "endpoint"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q: must be an http:// or https:// URL", key, raw)
	}
	return u, nil
}

// compression is the configured compression's name as the queue stores it
// and Content-Encoding sends it ("" for none); an error for a compression
// other than gzip, zstd or none.
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

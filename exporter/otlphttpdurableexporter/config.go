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

// Config is the otlp_http_durable exporter's configuration; its keys are
// those of the collector's otlp_http exporter that apply to metrics.
type Config struct {
	// ClientConfig is the HTTP client: endpoint (the OTLP/HTTP server's
	// base URL; /v1/metrics is appended, as otlp_http does), tls, headers,
	// auth, timeout (each attempt to send one request; 30 s by default),
	// compression (gzip by default; zstd or none). gzip is written at
	// level 1 (gzip.BestSpeed), zstd at its fastest level (zstd level 1):
	// compression_params::level may be 1 or unset, no other level.
	confighttp.ClientConfig `mapstructure:",squash"`

	// MetricsEndpoint, when set, is the full URL requests are POSTed to,
	// in place of endpoint + /v1/metrics.
	MetricsEndpoint string `mapstructure:"metrics_endpoint"`

	// Encoding is the requests' encoding: proto (the default, and the
	// only one; otlp_http's json is not supported).
	Encoding string `mapstructure:"encoding"`

	// QueueConfig is the collector's standard sending queue. With `storage`
	// set to a storage extension (file_storage) it is persistent and holds
	// each request encoded and compressed, as it is sent; its
	// `sizer: bytes` counts those bytes. `batch` is not supported: the
	// requests are encoded before the queue (merge_window joins batches).
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`

	// MergeWindow, when positive, sends the batches that come within it of
	// the first as one request (their encodings back to back, compressed
	// once), stored as one item of the queue: at most 2 MB of protobuf
	// before compression and half of queue_size (in points, or with
	// `sizer: bytes` in bytes of protobuf before compression); a larger
	// batch goes alone. It needs the sending queue. 0 (the default) sends each batch as it comes. A batch waits
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
	if l := cfg.CompressionParams.Level; l != 0 && l != 1 {
		errs = append(errs, fmt.Errorf("compression_params::level %d: not supported; gzip is written at level 1, zstd at its fastest level (1)", l))
	}
	if cfg.Encoding != "" && cfg.Encoding != "proto" {
		errs = append(errs, fmt.Errorf("encoding %q: not supported; this exporter sends protobuf (proto)", cfg.Encoding))
	}
	errs = append(errs, pushqueue.ValidateQueue(cfg.MergeWindow, cfg.QueueConfig, "batches are encoded before the queue")...)
	return errors.Join(errs...)
}

// metricsURL is where requests go: metrics_endpoint, or endpoint with
// /v1/metrics appended to its path. An error, quoting the value as
// configured, when it is not an http(s) URL with a host, or when endpoint
// has a query or a fragment (the path could not be appended).
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

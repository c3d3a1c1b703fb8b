// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Config is the remote_write exporter's configuration.
type Config struct {
	confighttp.ClientConfig `mapstructure:",squash"`

	// QueueConfig's sizer bytes counts compressed requests; num_consumers must be 1.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`

	BackOffConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// ExternalLabels override a label of the same name from the data.
	ExternalLabels map[string]string `mapstructure:"external_labels"`

	// MaxBatchSizeBytes bounds a request before compression.
	MaxBatchSizeBytes int `mapstructure:"max_batch_size_bytes"`

	// MaxSamplesPerSend is Prometheus' queue_config setting of that name.
	MaxSamplesPerSend int `mapstructure:"max_samples_per_send"`

	// ProtobufMessage is Prometheus' remote_write setting of that name (1.0 or 2.0).
	ProtobufMessage string `mapstructure:"protobuf_message"`

	// RetryOnAuthErrors retries 401 and 403, which the specification says not to.
	RetryOnAuthErrors bool `mapstructure:"retry_on_auth_errors"`

	// MergeWindow writes the batches that come within it into the same
	// requests and one queue item: with file_storage, bbolt rewrites a whole
	// leaf per write, so fewer items a scrape write less (docs/performance-pipelines.md).
	MergeWindow time.Duration `mapstructure:"merge_window"`

	// ResourceToTelemetryConversion is on by default, unlike contrib's:
	// without ernic.id and role the instances' series would collide.
	ResourceToTelemetryConversion promname.ResourceToTelemetrySettings `mapstructure:"resource_to_telemetry_conversion"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// maxBatchSizeLimit is far above what a receiver takes and below snappy's 4 GiB block bound.
const maxBatchSizeLimit = 1 << 30

// Validate checks the endpoint, the bounds, the labels and the queue settings.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: the remote-write URL is required (e.g. http://prometheus:9090/api/v1/write)"))
	} else if u, err := url.Parse(cfg.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("endpoint %q: must be an http:// or https:// URL with a host", cfg.Endpoint))
	}
	if c := cfg.Compression; c != "" && c != "none" {
		// confighttp does not compress a request with a Content-Encoding already.
		errs = append(errs, fmt.Errorf("compression %q: remote-write requests are snappy-compressed by the protocol; remove the setting", c))
	}
	errs = append(errs, pushqueue.ValidateQueue(cfg.MergeWindow, cfg.QueueConfig, "requests are cut by max_batch_size_bytes")...)
	if cfg.MaxBatchSizeBytes <= 0 || cfg.MaxBatchSizeBytes > maxBatchSizeLimit {
		errs = append(errs, fmt.Errorf("max_batch_size_bytes %d: must be positive and at most %d", cfg.MaxBatchSizeBytes, maxBatchSizeLimit))
	}
	if cfg.ProtobufMessage != translator.MessageV1 && cfg.ProtobufMessage != translator.MessageV2 {
		errs = append(errs, fmt.Errorf("protobuf_message %q: must be %s (remote write 1.0) or %s (2.0)", cfg.ProtobufMessage, translator.MessageV1, translator.MessageV2))
	}
	if cfg.MaxSamplesPerSend <= 0 {
		errs = append(errs, fmt.Errorf("max_samples_per_send %d: must be positive", cfg.MaxSamplesPerSend))
	}
	for k := range cfg.Headers.Iter {
		if reservedHeader(k) {
			errs = append(errs, fmt.Errorf("headers: %q is set by the remote-write protocol and cannot be overridden", k))
		}
	}
	for k, v := range cfg.ExternalLabels {
		if strings.TrimSpace(k) == "" || v == "" {
			errs = append(errs, fmt.Errorf("external_labels: %q=%q: neither the name nor the value may be empty", k, v))
		}
	}
	if cfg.QueueConfig.HasValue() && cfg.QueueConfig.Get().NumConsumers != 1 {
		errs = append(errs, fmt.Errorf("sending_queue::num_consumers %d: must be 1; a remote-write backend rejects a sample older than the newest of its series, which parallel senders produce", cfg.QueueConfig.Get().NumConsumers))
	}
	return errors.Join(errs...)
}

// newTranslator returns the translator of cfg's settings.
func newTranslator(cfg *Config) *translator.Translator {
	s := translator.Settings{
		ExternalLabels:                cfg.ExternalLabels,
		MaxBatchSizeBytes:             cfg.MaxBatchSizeBytes,
		MaxSamplesPerSend:             cfg.MaxSamplesPerSend,
		Protocol:                      translator.ProtocolV1,
		ResourceToTelemetryConversion: cfg.ResourceToTelemetryConversion.Enabled,
	}
	if cfg.ProtobufMessage == translator.MessageV2 {
		s.Protocol = translator.ProtocolV2
	}
	return translator.New(s)
}

// reservedHeader reports whether the protocol sets header name itself: a
// receiver would misread a request whose protocol headers were changed.
func reservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(strings.TrimSpace(name)) {
	case "X-Prometheus-Remote-Write-Version", "Content-Encoding", "Content-Type", "Content-Length", "User-Agent":
		return true
	}
	return false
}

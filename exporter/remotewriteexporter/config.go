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

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Config is the remote_write exporter's configuration.
type Config struct {
	// ClientConfig is the HTTP client: endpoint (the remote-write URL,
	// e.g. http://prometheus:9090/api/v1/write), headers, tls, and timeout,
	// which bounds each request (one attempt of one remote-write request).
	confighttp.ClientConfig `mapstructure:",squash"`

	// QueueConfig is the collector's standard sending queue. With `storage`
	// set to a storage extension (file_storage) it is persistent: what it
	// holds survives a restart. Its `sizer: bytes` counts the compressed
	// remote-write requests, so `queue_size` is the bound on the data kept
	// while the endpoint is unreachable. When the queue is full while sending
	// fails, the oldest batch is dropped to make room (see doc.go).
	// `batch` is not supported: batches are cut by max_batch_size_bytes.
	// num_consumers must be 1 (the default here): batches go out in order.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`

	// BackOffConfig is how a failed request (connection refused, timeout,
	// 5xx, 429) is retried: initial_interval, max_interval, multiplier,
	// randomization_factor; max_elapsed_time 0 retries until it goes
	// through (the queue is the bound). With enabled: false a failed batch
	// is dropped at once.
	BackOffConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// ExternalLabels are added to every series (e.g. a host label); they
	// override a label of the same name from the data. Values must not be
	// empty.
	ExternalLabels map[string]string `mapstructure:"external_labels"`

	// MaxBatchSizeBytes bounds one remote-write request before compression,
	// in bytes (the serialized WriteRequest). A batch larger than this is
	// sent as several requests. Default 3,000,000, at most 1 GiB; a
	// single series larger than the bound still goes out alone.
	MaxBatchSizeBytes int `mapstructure:"max_batch_size_bytes"`

	// MaxSamplesPerSend bounds one remote-write request in samples, as
	// Prometheus' queue_config of that name (default 2000, Prometheus 3's):
	// a request ends at whichever of this and max_batch_size_bytes comes
	// first.
	MaxSamplesPerSend int `mapstructure:"max_samples_per_send"`

	// ProtobufMessage is the remote-write message sent, as Prometheus'
	// remote_write setting of that name: prometheus.WriteRequest (remote
	// write 1.0, the default) or io.prometheus.write.v2.Request (2.0: a
	// symbol table, metadata per series, and each counter's start
	// timestamp). A 2.0 endpoint that answers 415, or a 2xx without the
	// 2.0 X-Prometheus-Remote-Write-*-Written headers (an endpoint that
	// read the request as 1.0 and found nothing in it), makes the
	// exporter send 1.0 from then on (until it restarts), that request
	// included.
	ProtobufMessage string `mapstructure:"protobuf_message"`

	// RetryOnAuthErrors keeps a request the endpoint answers 401 or 403
	// in the queue, retried with backoff, for a credential rotation to
	// catch up with. Off by default: the remote-write specification says a
	// sender must not retry a 4xx other than 429, so by default such a
	// request is dropped and counted like any other refusal.
	RetryOnAuthErrors bool `mapstructure:"retry_on_auth_errors"`

	// MergeWindow, when positive, writes the batches that come within it
	// of the first into the same requests (in order, each request still
	// at most max_batch_size_bytes) and stores them as one item of the
	// sending queue, of about 4 MiB of compressed requests at most and
	// half of queue_size (a batch that would make an item larger than
	// that is split across items); 0 (the default) stores each
	// batch as it comes, in requests of its own, and refuses a batch
	// larger than queue_size. With it, no batch processor is needed in
	// front to make requests of a useful size from small batches. A batch
	// waits at most this long before it is in the queue, so with a
	// persistent queue it is what a crash can lose on top of what waits
	// upstream. Worth it with file_storage: bbolt rewrites the whole leaf of
	// every key a write changes, other items in it included, so several
	// items of one scrape in the queue at once multiply what goes to disk
	// (docs/performance.md).
	MergeWindow time.Duration `mapstructure:"merge_window"`

	// ResourceToTelemetryConversion makes the resource attributes labels
	// of every series (contrib's setting of that name). On by default,
	// unlike contrib's exporters: the receiver's ernic.id and role are
	// resource attributes, and without them the series of the instances
	// would collide.
	ResourceToTelemetryConversion promname.ResourceToTelemetrySettings `mapstructure:"resource_to_telemetry_conversion"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// maxBatchSizeLimit is the largest max_batch_size_bytes: 1 GiB, far above
// what a remote-write receiver takes (Prometheus' own sender stays near
// 2 MB), and below snappy's 4 GiB bound on a block.
const maxBatchSizeLimit = 1 << 30

// Validate checks the endpoint, the batch bound, the external labels and the
// queue settings this exporter supports.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: the remote-write URL is required (e.g. http://prometheus:9090/api/v1/write)"))
	} else if u, err := url.Parse(cfg.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("endpoint %q: must be an http:// or https:// URL with a host", cfg.Endpoint))
	}
	if c := cfg.Compression; c != "" && c != "none" {
		// confighttp would not compress a request that has a
		// Content-Encoding already: the setting would do nothing.
		errs = append(errs, fmt.Errorf("compression %q: remote-write requests are snappy-compressed by the protocol; remove the setting", c))
	}
	errs = append(errs, pushqueue.ValidateQueue(cfg.MergeWindow, cfg.QueueConfig, "requests are cut by max_batch_size_bytes")...)
	if cfg.MaxBatchSizeBytes <= 0 || cfg.MaxBatchSizeBytes > maxBatchSizeLimit {
		errs = append(errs, fmt.Errorf("max_batch_size_bytes %d: must be positive and at most %d", cfg.MaxBatchSizeBytes, maxBatchSizeLimit))
	}
	if cfg.ProtobufMessage != messageV1 && cfg.ProtobufMessage != messageV2 {
		errs = append(errs, fmt.Errorf("protobuf_message %q: must be %s (remote write 1.0) or %s (2.0)", cfg.ProtobufMessage, messageV1, messageV2))
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

// reservedHeader reports whether the remote-write specification, or this
// exporter, sets header name itself: a receiver would misread a request
// whose protocol headers a configuration changed (Prometheus refuses to
// start with them). Authorization is not reserved: it is how a static
// credential is configured.
func reservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(strings.TrimSpace(name)) {
	case "X-Prometheus-Remote-Write-Version", "Content-Encoding", "Content-Type", "Content-Length", "User-Agent":
		return true
	}
	return false
}

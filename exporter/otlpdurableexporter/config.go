// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

	"errors"
	"time"

	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Config is the otlp_durable exporter's configuration; its keys are those
// of the collector's otlp_grpc exporter.
type Config struct {
	// ClientConfig is the gRPC client: endpoint (host:port of an OTLP/gRPC
	// server), tls, compression (gzip by default; zstd, snappy, none),
	// headers, auth, keepalive, wait_for_ready.
	configgrpc.ClientConfig `mapstructure:",squash"`

	// TimeoutConfig bounds each attempt to send one batch (timeout, 5 s by
	// default).
	TimeoutConfig exporterhelper.TimeoutConfig `mapstructure:",squash"`

	// QueueConfig is the collector's standard sending queue. With `storage`
	// set to a storage extension (file_storage) it is persistent and holds
	// each batch as the encoded request, compressed with `compression`;
	// its `sizer: bytes` counts those bytes. `batch` is not supported: the requests
	// are encoded before the queue (merge_window joins batches).
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`

	// MergeWindow, when positive, sends the batches that come within it of
	// the first as one request (their encodings back to back, compressed
	// once), stored as one item of the queue: at most 2 MB of protobuf
	// before compression (under half of a default gRPC server's 4 MiB
	// limit) and half of queue_size (in points, or with `sizer: bytes` in
	// bytes of protobuf before compression); a larger batch goes alone.
	// It needs the sending queue. 0 (the default) sends each batch as it
	// comes. With it, no batch processor is needed in front to make
	// requests of a useful size from small batches. A batch waits at most
	// this long before it is in the queue: with a persistent queue, what a
	// crash can lose on top of what waits upstream.
	MergeWindow time.Duration `mapstructure:"merge_window"`

	// RetryConfig is how a failed batch is retried (retry_on_failure).
	RetryConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the endpoint and the queue settings this exporter supports.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: the OTLP/gRPC server's host:port is required"))
	}
	errs = append(errs, pushqueue.ValidateQueue(cfg.MergeWindow, cfg.QueueConfig, "batches are encoded before the queue")...)
	return errors.Join(errs...)
}

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

// Config is otlp_grpc's configuration with merge_window (README.md).
type Config struct {
	configgrpc.ClientConfig `mapstructure:",squash"`

	// TimeoutConfig bounds each attempt.
	TimeoutConfig exporterhelper.TimeoutConfig `mapstructure:",squash"`

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

// Validate checks the endpoint and the queue settings this exporter supports.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: the OTLP/gRPC server's host:port is required"))
	}
	errs = append(errs, pushqueue.ValidateQueue(cfg.MergeWindow, cfg.QueueConfig, "batches are encoded before the queue")...)
	return errors.Join(errs...)
}

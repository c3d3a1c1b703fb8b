// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlpqueue is what otlp_durable and otlp_http_durable share: each
// batch encoded and compressed once, as it enters the sending queue, sent as
// stored, and with a merge window batches joined into one request.
package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

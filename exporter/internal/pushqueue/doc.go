// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package pushqueue is what the push exporters (remote_write, otlp_durable,
// otlp_http_durable) share around exporterhelper's sending queue: a request
// prepared before the queue is handed to it through the context (Offer,
// Prepared), batches within a merge window become one queue item (Window),
// and one sender retries, and drops the oldest batch when a producer needs
// its room during an outage (Sender), which exporterhelper's queue cannot.
package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

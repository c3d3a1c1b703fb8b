// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package pushqueue is what the push exporters share around exporterhelper's
// queue: requests prepared before it (Offer), batches merged into one queue
// item (Window), and retries that drop the oldest batch when the queue is
// full during an outage (Sender), which exporterhelper's queue cannot.
package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

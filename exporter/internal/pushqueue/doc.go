// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package pushqueue is the one core of the push exporters: the queue, the
// retries, the drop-oldest policy, the order after a restart and every
// count of delivery. A backend gives it its request, encoding and send
// (Settings); README.md is the guide, example_test.go the smallest backend.
package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

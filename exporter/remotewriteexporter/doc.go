// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package remotewriteexporter sends metrics to a Prometheus remote-write 1.0
// endpoint through the collector's standard sending queue. Each batch is
// translated to remote-write requests (snappy-compressed, at most
// max_batch_size_bytes each) when it enters the queue, so a persistent queue
// (sending_queue::storage) keeps the requests exactly as they will be sent
// and its bytes bound is a bound on what is kept on disk. With merge_window,
// the batches that come within it are written into the same requests and
// stored as one item (merge.go): requests of a useful size from the
// receiver's batch per instance without a batch processor, and three to
// five times less written to disk by bbolt at 64 instances of 256 to 1024
// QPs.
//
// Delivery rules, in the order a request meets them:
//   - accepted (2xx): done;
//   - rejected for its content (any other 4xx than 429): dropped, counted and
//     logged; the requests behind it go on;
//   - failed (connection, timeout, 5xx, 429): retried with backoff until it
//     goes through, logged at most once a minute per cause;
//   - the queue is full while sending fails: the oldest batch is dropped to
//     make room for the newest.
package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package remotewriteexporter sends metrics to a Prometheus remote-write 1.0
// (or 2.0) endpoint through the collector's standard sending queue. Each batch is
// translated to remote-write requests (snappy-compressed, at most
// max_batch_size_bytes and max_samples_per_send each) when it enters the
// queue, so a persistent queue (sending_queue::storage) keeps the requests
// exactly as they will be sent and its bytes bound is a bound on what is
// kept on disk. With merge_window, the batches that come within it are
// written into the same requests and stored as one item (merge.go):
// requests of a useful size from the receiver's batch per instance without
// a batch processor, and three to five times less written to disk by bbolt
// at 64 instances of 256 to 1024 QPs.
//
// With protobuf_message: io.prometheus.write.v2.Request it speaks remote
// write 2.0 instead (translate_v2.go): each request has a symbol table,
// every series its type, unit and help, and a counter's samples its start
// timestamp, which lets a receiver with created-timestamp ingestion count
// an increase across a restart exactly. The queue stores which protocol a
// request is in. An endpoint that answers a 2.0 request with 415, or with
// a 2xx without the X-Prometheus-Remote-Write-Samples-Written header (a
// 1.0 receiver), gets that request again as 1.0, and 1.0 from then on,
// logged once (fallback.go). Samples a 2.0 receiver took but did not store
// (its written headers) are counted and logged once a minute.
//
// It takes gauges and cumulative sums, all the ernic receiver emits.
// Histograms, exponential histograms, summaries and delta sums are not
// sent: their points are counted and logged once a minute, by type.
//
// Delivery rules, in the order a request meets them (the remote-write
// specification's):
//   - accepted (2xx): done;
//   - rejected (any 4xx but 429; with retry_on_auth_errors, not 401 and
//     403, which are then retried, outside the specification): dropped,
//     counted and logged; the requests behind it go on;
//   - failed (connection, timeout, 5xx, 429): retried with exponential
//     backoff and jitter (retry_on_failure), waiting at least what a
//     Retry-After header of a 429 or 503 asks, up to 5 minutes, until it
//     goes through; logged at most once a minute per cause;
//   - the queue is full while sending fails: the oldest batch is dropped to
//     make room for the newest.
package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

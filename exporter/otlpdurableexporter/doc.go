// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package otlpdurableexporter sends metrics over OTLP/gRPC through the
// collector's standard sending queue, like the collector's otlp_grpc
// exporter, but encodes each batch only once: into the protobuf
// ExportMetricsServiceRequest, compressed with the configured compression,
// when it enters the queue. A persistent queue (sending_queue::storage)
// stores those bytes as they are and the sender sends them as stored
// (exporter/internal/otlpqueue, shared with otlp_http_durable), where
// otlp_grpc marshals a batch to store it, unmarshals it back to pdata to
// send it and marshals it again on the wire
// (docs/performance-pipelines.md, OTLP: the round trip was half of the
// OTLP pipeline's CPU at 64 instances x 256 QPs). With merge_window, the batches that come within it are sent as
// one request, encoded back to back and compressed into one stream as
// they come, so that the receiver's batch per instance needs no batch
// processor in front. gzip is written at level 1 (otlp_grpc: the default
// level, 7.6 times slower for 9 % fewer bytes; otlpqueue/compress.go).
//
// Everything else follows otlp_grpc: the gRPC client settings (endpoint,
// tls, compression, headers, auth, keepalive, wait_for_ready), the retry of
// Unavailable, DeadlineExceeded, Canceled, Aborted, OutOfRange and DataLoss
// and of ResourceExhausted with RetryInfo, a throttle delay from RetryInfo,
// any other status dropping the batch as permanent, and a warning for a
// partial success.
//
// Unlike otlp_grpc, a persistent queue does not store the request's context
// (span context, client metadata) with a batch: a batch read back after a
// restart is sent without it; and a merged request carries the context of
// the batch that filled it, or none when merge_window ended it. The ernic
// receiver sets neither.
package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

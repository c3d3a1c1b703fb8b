// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package otlphttpdurableexporter sends metrics over OTLP/HTTP (protobuf)
// through the collector's standard sending queue, like the collector's
// otlp_http exporter, but encodes each batch only once: into the protobuf
// ExportMetricsServiceRequest, compressed with the configured compression
// (gzip or zstd), when it enters the queue (exporter/internal/otlpqueue,
// shared with otlp_durable, its OTLP/gRPC sibling). A persistent queue
// (sending_queue::storage) stores those bytes as they are and the sender
// POSTs them as stored, where otlp_http stores each batch as uncompressed
// protobuf, reads it back into pdata and marshals and compresses it again
// to send it: at 64 instances x 256 QPs behind the batch processor that
// round trip was 56 % of config/otlphttp.yaml's CPU (the queue's bbolt
// writes 32 %, reading back 12 %, compress/gzip 12 %;
// docs/performance-memory.md). With merge_window, the batches that come
// within it are sent as one request, so the receiver's batch per instance
// needs no batch processor in front.
//
// Everything else follows otlp_http and the OTLP/HTTP specification: the
// HTTP client settings (endpoint with /v1/metrics appended, or
// metrics_endpoint; tls, headers, auth, timeout), 429, 502, 503 and 504
// retried (429 and 503 after the server's Retry-After when it sends one),
// any other status dropping the request as permanent, and a warning for a
// partial success. The one encoding is protobuf (Prometheus' OTLP receiver
// and the collector's take it); the compressions are gzip (Prometheus'
// receiver takes only gzip or none) and zstd.
//
// Unlike otlp_http, a persistent queue does not store the request's
// context (client metadata) with a batch: a batch read back after a
// restart is sent without it; and a merged request carries the context of
// the batch that filled it, or none when merge_window ended it. The ernic
// receiver sets none.
package otlphttpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter"

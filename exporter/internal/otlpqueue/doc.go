// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlpqueue is what the otlp_durable (gRPC) and otlp_http_durable
// exporters share: each batch encoded once, into the protobuf
// ExportMetricsServiceRequest compressed with the configured compression,
// as it enters the collector's sending queue (Request, Encoding, Compress);
// with a merge window, the batches that come within it encoded back to
// back into one request, compressed as they come (merge.go, stream.go).
// A persistent queue stores the request as it is and the exporter's push
// sends it as stored: the transport (gRPC or HTTP) is the exporter's.
package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package otlphttpdurableexporter is otlp_http (protobuf, metrics) with each
// batch encoded and compressed once, as it enters the sending queue, and
// POSTed as stored (exporter/internal/otlpqueue): otlp_http's persistent
// queue stores uncompressed protobuf and encodes it again to send it. How
// it differs from otlp_http is in its README.md.
package otlphttpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter"

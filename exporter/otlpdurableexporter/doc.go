// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package otlpdurableexporter is otlp_grpc with each batch encoded and
// compressed once, as it enters the sending queue, and sent as stored
// (exporter/internal/otlpqueue), where otlp_grpc's persistent queue
// marshals, unmarshals and marshals again. Differences: README.md.
package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

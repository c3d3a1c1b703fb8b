// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package remotewriteexporter sends metrics to a Prometheus remote-write 1.0
// or 2.0 endpoint. Each batch is translated into snappy-compressed requests
// as it enters the sending queue, so a persistent queue keeps them exactly
// as they will be sent. The delivery rules (the remote-write
// specification's) and the differences from contrib are in README.md.
package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package ernicreceiver scrapes a rocm-ernic run directory: the manifest
// instances.json, one <id>.stats file per server instance, and the server
// processes in /proc. Its metrics are defined in metadata.yaml and documented
// in documentation.md.
package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

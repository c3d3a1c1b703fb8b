// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package selftelemetryreceiver publishes the delivery counts of this
// collector's push exporters (internal/deliverystats) and the collector's
// version as metrics of a pipeline, so that they reach the backend through
// the same queue as the data, under the host's identity. Its metrics are
// defined in metadata.yaml and documented in documentation.md.
package selftelemetryreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver"

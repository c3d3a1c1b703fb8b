// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package prometheustextexporter serves the latest batch of each resource
// on an HTTP endpoint in the Prometheus text format (0.0.4), rendered once
// when the batch comes rather than copied point by point and rendered per
// GET, with the names of contrib's prometheus exporter (README.md).
package prometheustextexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter"

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package prometheustextexporter serves the latest metrics of each resource
// on an HTTP endpoint in the Prometheus text format (0.0.4), for a
// Prometheus server to scrape.
//
// It keeps the batches it is given, not copies of their points: each
// resource's latest batch replaces the one before, and a GET writes them
// out as they are, names and labels translated with otlptranslator
// (UnderscoreEscapingWithSuffixes: the names of contrib's prometheus
// exporter with its default settings, without otel_scope_* labels and
// without target_info). A series is served while its resource's latest
// batch has it: a series that stops is gone at the next batch, and a
// resource whose batches stop is gone after metric_expiration. A point
// without a recorded value (a staleness marker) is not served.
package prometheustextexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter"

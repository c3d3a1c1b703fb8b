// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package deliveryreport logs what happens to the push exporters' batches
// once a minute per cause at most, with the backlog and running totals, so
// that an outage or a full disk is loud without flooding the journal.
package deliveryreport // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"

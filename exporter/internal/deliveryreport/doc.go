// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package deliveryreport is the logging policy of the three push
// exporters: what happens to their batches is logged once a minute per
// cause at most, with the backlog and running totals, and recovery once;
// and the lines exporterhelper writes for them are sampled to one a
// minute per message, so that an outage or a full disk is loud without
// flooding the journal.
package deliveryreport // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

// The LIF counter names are the receiver's: one list, rundir.LIFCounterNames,
// copied here by genlifnames (make generate; check-generate fails when the
// copy is not current).
//go:generate go run ./internal/genlifnames ../../receiver/ernicreceiver/internal/rundir/names.go lifnames_gen.go

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

// The LIF counter names and the device keys are the receiver's: one list
// each in package rundir, copied here by gennames (make generate;
// check-generate fails when the copy is not current).
//go:generate go run ./internal/gennames ../../receiver/ernicreceiver/internal/rundir names_gen.go

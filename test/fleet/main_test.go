// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

// Package fleet tests a fleet at its own size on this machine: a hundred
// collectors with host names of their own, each on its own simulated run
// directory, pushing with the shipped remote-write configuration and the
// fleet profile into Thanos receive through a backend outage, a receiver
// killed mid-catch-up and a rolling upgrade (`make fleet-test`; build tag
// fleet).
package fleet

import (
	"os"
	"testing"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// TestMain lets the simulators re-execute this test binary as their server
// children (sim.HoldIfChild, the helper-process pattern).
func TestMain(m *testing.M) {
	sim.HoldIfChild()
	os.Exit(m.Run())
}

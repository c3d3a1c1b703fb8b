// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// TestMain lets the simulator re-execute this test binary as its server
// children (sim.HoldIfChild, the helper-process pattern).
func TestMain(m *testing.M) {
	sim.HoldIfChild()
	os.Exit(m.Run())
}

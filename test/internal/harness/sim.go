// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// StartSim starts a simulated run directory with o (internal/sim) and
// stops it when the test ends (its shutdown writes, children reaped).
func StartSim(t testing.TB, o sim.Options) *sim.Sim {
	t.Helper()
	s, err := sim.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Stop()
		cancel()
	})
	return s
}

// WriteManifest writes <runDir>/instances.json with internal/sim's writer
// (the launcher's layout and key order), failing the test on an error.
func WriteManifest(t testing.TB, runDir string, instances []sim.Instance) {
	t.Helper()
	if err := sim.WriteManifestInPlace(filepath.Join(runDir, "instances.json"), instances); err != nil {
		t.Fatalf("write instances.json: %v", err)
	}
}

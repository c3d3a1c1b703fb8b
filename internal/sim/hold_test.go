// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	HoldIfChild()
	os.Exit(m.Run())
}

// A test binary run with HoldEnv=1 in its environment (exported in a
// shell by mistake, or inherited) still runs its tests: only a binary
// started as a child (argument HoldArg too) holds. The package init that
// held and exited any binary linking this package made `go test` print ok
// with no test run.
func TestHoldEnvDoesNotDisableTests(t *testing.T) {
	if os.Getenv("ERNIC_SIM_HOLD_PROBE") == "1" {
		return // the run below
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldEnvDoesNotDisableTests$", "-test.v")
	cmd.Env = append(os.Environ(), HoldEnv+"=1", "ERNIC_SIM_HOLD_PROBE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := "--- PASS: TestHoldEnvDoesNotDisableTests"; !strings.Contains(string(out), want) {
		t.Fatalf("with %s=1 the test binary ran no test; output:\n%s", HoldEnv, out)
	}
}

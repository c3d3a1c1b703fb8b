// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// tenant is the Thanos tenant the fleet writes as (THANOS-TENANT, receive's
// default tenant header); receive stores it as tenant_id.
const tenant = "gpu-fleet"

// hostRunDir is each host's simulated run directory: a manager and one
// worker with a VM, 2 QPs, the LIF block, rewritten every second. It is the
// smallest directory the server rewrites (the manager's file is written
// only at start), and with the LIF counters it pushes 198 series under the
// fleet profile, the per-instance series of a real host's two instances.
// The per-QP series stay on the host's local endpoint.
func hostRunDir(dir string, seed int64) sim.Options {
	return sim.Options{RunDir: dir, Instances: 2, QPs: 2, Interval: time.Second, LIF: true, Seed: seed}
}

// settings are what a run of the fleet test is made of.
type settings struct {
	// hosts is FLEET_HOSTS (default 100); outage FLEET_OUTAGE (default 4m).
	hosts  int
	outage time.Duration
	// collector and upgrade are the two builds a rolling upgrade goes
	// between, with their versions (`--version`).
	collector, upgrade               string
	collectorVersion, upgradeVersion string
	thanos                           string
}

// loadSettings reads the environment `make fleet-test` sets.
func loadSettings(t *testing.T) settings {
	t.Helper()
	s := settings{hosts: 100, outage: 4 * time.Minute, collector: harness.CollectorBinary(t), thanos: harness.ThanosBinary(t)}
	if v := os.Getenv("FLEET_HOSTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < len(faultHosts)+2 {
			t.Fatalf("FLEET_HOSTS=%q: want a number of hosts, at least %d", v, len(faultHosts)+2)
		}
		s.hosts = n
	}
	if v := os.Getenv("FLEET_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			t.Fatalf("FLEET_OUTAGE=%q: want a duration of a minute or more", v)
		}
		s.outage = d
	}
	s.upgrade = os.Getenv("OTELCOL_UPGRADE_BIN")
	if s.upgrade == "" {
		t.Fatal("OTELCOL_UPGRADE_BIN is not set: `make fleet-test` builds the collector a second time under another version (make otelcol-upgrade) for the rolling upgrade")
	}
	s.collectorVersion, s.upgradeVersion = version(t, s.collector), version(t, s.upgrade)
	if s.collectorVersion == s.upgradeVersion {
		t.Fatalf("%s and %s are both version %s: the upgrade needs another", s.collector, s.upgrade, s.collectorVersion)
	}
	return s
}

// version is what `bin --version` prints after the name: "otelcol-ernic
// version X".
func version(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		t.Fatalf("%s --version printed nothing", bin)
	}
	return f[len(f)-1]
}

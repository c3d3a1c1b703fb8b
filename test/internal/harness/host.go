// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// HostCollector is the Launch of the collector binary bin with the configs
// and the environment env on a host called host: with `unshare --uts` and
// the host's name set in that namespace, so that the collector reads it as
// a real host's (the receiver's host.name is the kernel's host name).
// unshare and sh exec it, so its pid is the collector's and SIGTERM reaches
// it; it is stopped when the test ends. It needs root.
func HostCollector(host, bin string, env []string, configs ...string) Launch {
	args := append([]string{"--uts", "--", "sh", "-c", `hostname "$0" && exec "$@"`, host, bin}, ConfigArgs(configs...)...)
	return Launch{
		Name: fmt.Sprintf("collector of %s %v", host, configs),
		Path: "unshare", Args: args, Env: env, StopWait: 15 * time.Second,
	}
}

// UnitEnvironment is the environment the shipped systemd unit
// (deploy/otelcol-ernic.service) gives the collector: its Environment=
// lines (GOMAXPROCS, GOMEMLIMIT), so that a test's collector runs as an
// installed one does.
func UnitEnvironment(t testing.TB) []string {
	t.Helper()
	unit, err := os.ReadFile(filepath.Join(RepoRoot(t), "deploy", "otelcol-ernic.service"))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for line := range strings.Lines(string(unit)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Environment="); ok {
			env = append(env, strings.Trim(v, `"`))
		}
	}
	if len(env) == 0 {
		t.Fatal("deploy/otelcol-ernic.service has no Environment= line")
	}
	return env
}

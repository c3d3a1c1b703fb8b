// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// configErrorTimeout bounds how long the collector may take to refuse a bad
// configuration and exit.
const configErrorTimeout = 30 * time.Second

// TestConfigErrorsStopCollector runs `otelcol-ernic --config <bad config>`
// for invalid receiver settings and checks that the collector exits non-zero
// on its own, within configErrorTimeout, with a message that names the key
// (and, for the receiver's own checks, the fix). A proc_dir that does not
// exist passes validation: the receiver's Start finds it, which stops the
// collector the same way.
func TestConfigErrorsStopCollector(t *testing.T) {
	bin := harness.CollectorBinary(t)
	root := harness.RepoRoot(t)
	procDir := filepath.Join(root, "receiver", "ernicreceiver", "testdata", "proc", "basic")

	cases := []struct {
		name string
		// settings is one line of the ernic receiver's settings; run_dir
		// (a temporary directory) and proc_dir (the fixture /proc) are set
		// too unless settings sets them.
		settings string
		want     []string
	}{
		{"empty run_dir", `run_dir: ""`, []string{
			`"run_dir" must not be empty: set it to the rocm-ernic run directory (default /run/rocm-ernic)`,
		}},
		{"negative max_qps_per_instance", `max_qps_per_instance: -1`, []string{
			`"max_qps_per_instance" is -1: it must be 0 (no limit) or a positive number of QPs`,
		}},
		{"zero max_file_bytes", `max_file_bytes: 0`, []string{
			`"max_file_bytes" is 0: it must be a positive number of bytes`,
		}},
		{"zero collection_interval", `collection_interval: 0s`, []string{
			`"collection_interval": requires positive value`,
		}},
		{"unknown key", `run_directory: /run/rocm-ernic`, []string{
			`error reading configuration for "ernic"`, "invalid keys: run_directory",
		}},
		{"non-number max_qps_per_instance", `max_qps_per_instance: lots`, []string{
			`error reading configuration for "ernic"`, `'max_qps_per_instance' expected type 'int'`,
		}},
		{"nonexistent proc_dir", `proc_dir: /nonexistent/ernic-e2e/proc`, []string{
			`failed to start "ernic" receiver`,
			`proc_dir "/nonexistent/ernic-e2e/proc"`,
			"set proc_dir to the host's proc filesystem",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			receiver := []string{tc.settings}
			for _, kv := range []string{"run_dir: " + t.TempDir(), "proc_dir: " + procDir} {
				if key, _, _ := strings.Cut(kv, ":"); !strings.HasPrefix(tc.settings, key+":") {
					receiver = append(receiver, kv)
				}
			}
			config := harness.WriteFile(t, "bad.yaml", `receivers:
  ernic:
    `+strings.Join(receiver, "\n    ")+`
exporters:
  debug:
service:
  pipelines:
    metrics:
      receivers: [ernic]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
`)
			ctx, cancel := context.WithTimeout(context.Background(), configErrorTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--config", config)
			cmd.Dir = root
			cmd.Env = harness.CleanEnv()
			cmd.WaitDelay = 5 * time.Second
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("the collector did not exit within %s (killed)\n%s", configErrorTimeout, out)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
				t.Fatalf("the collector exited with %v after %s; want a non-zero exit code\n%s", err, took, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q\n%s", w, out)
				}
			}
			t.Logf("exit code %d after %s", exit.ExitCode(), took.Round(time.Millisecond))
		})
	}
}

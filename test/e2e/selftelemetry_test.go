// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestLocalEndpointBuildInfo: config/local.yaml serves
// otelcol_build_info{version="<the binary's version>"} 1 and no delivery
// series (it has no push exporter), and serves it beside the ernic
// cluster gauges at every scrape: prometheus_text keeps the latest batch
// of each resource, and a selftelemetry resource like the cluster gauges'
// (no attribute) would replace them, and they it, one collection in two.
func TestLocalEndpointBuildInfo(t *testing.T) {
	harness.CollectorBinary(t)
	version := harness.CollectorVersion(t)
	runDir := t.TempDir()
	waitPastOwnStart(t)
	writeRunDir(t, runDir, fixtures(time.Now()))
	promPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	for healthPort == promPort {
		healthPort = harness.FreePort(t)
	}
	c := startCollector(t, runDir, promPort, healthPort)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort)

	// Both receivers collect every second (opcodeReceiver); 25 scrapes
	// over 5 s see each replace its batch several times.
	eventually(t, waitTimeout, "the build info served", func() []string {
		mfs, err := harness.Scrape(context.Background(), url)
		if err != nil || mfs["otelcol_build_info"] == nil {
			return []string{fmt.Sprintf("no otelcol_build_info yet (%v)", err)}
		}
		return nil
	})
	for i := range 25 {
		select {
		case <-c.Exited():
			t.Fatalf("collector exited: %v", c.Err())
		default:
		}
		mfs, err := harness.Scrape(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		var otelcol []string
		for name := range mfs {
			if strings.HasPrefix(name, "otelcol_") {
				otelcol = append(otelcol, name)
			}
		}
		slices.Sort(otelcol)
		if !slices.Equal(otelcol, []string{"otelcol_build_info"}) {
			t.Fatalf("scrape %d: otelcol_* families %v, want the build info only", i, otelcol)
		}
		bi := mfs["otelcol_build_info"].GetMetric()
		if len(bi) != 1 || labelString(bi[0]) != fmt.Sprintf(`{version=%q}`, version) || bi[0].GetGauge().GetValue() != 1 {
			t.Fatalf("scrape %d: otelcol_build_info %v, want {version=%q} 1", i, bi, version)
		}
		if mfs["ernic_instances"] == nil || mfs["ernic_run_dir_readable"] == nil {
			t.Fatalf("scrape %d: the cluster gauges are missing beside the build info", i)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("25 scrapes over 5 s: otelcol_build_info{version=%q} 1 beside the cluster gauges in each", version)
}

// TestSecondSelfTelemetryReceiverRefused: a second selftelemetry receiver
// with the first one's host identity stops the collector as it starts,
// naming both, with the fix: its series would be the first one's again.
func TestSecondSelfTelemetryReceiverRefused(t *testing.T) {
	bin := harness.CollectorBinary(t)
	root := harness.RepoRoot(t)
	override := harness.WriteFile(t, "second.yaml", `receivers:
  selftelemetry/b:
exporters:
  prometheus_text:
    endpoint: 127.0.0.1:0
extensions:
  healthcheckv2:
    http:
      endpoint: 127.0.0.1:0
service:
  pipelines:
    metrics:
      receivers: [ernic, selftelemetry, selftelemetry/b]
`)
	ctx, cancel := context.WithTimeout(context.Background(), configErrorTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", filepath.Join(root, "config", "local.yaml"), "--config", override)
	cmd.Env = append(harness.CleanEnv(), "ERNIC_RUN_DIR="+t.TempDir())
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the collector did not exit within %s (killed)\n%s", configErrorTimeout, out)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
		t.Fatalf("the collector exited with %v; want a non-zero exit code\n%s", err, out)
	}
	for _, w := range []string{
		`failed to start "selftelemetry`,
		`already publishes this collector's delivery series without host.name`,
		"list the one receiver selftelemetry",
	} {
		if !strings.Contains(string(out), w) {
			t.Errorf("output lacks %q\n%s", w, out)
		}
	}
}

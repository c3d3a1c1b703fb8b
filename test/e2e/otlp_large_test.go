// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

var debugPointsRE = regexp.MustCompile(`"data points": (\d+)`)

// TestOTLPLargeHost: a host whose scrape is far larger than an OTLP/gRPC
// receiver's message limit (16 instances x 256 QPs with the per-opcode
// metric: about 130k points, 11 MB) goes out with the shipped
// config/otlp.yaml in requests the receiver takes. The second collector
// takes at most 2 MiB a message, half a default receiver's 4 MiB: nothing
// is refused, nothing dropped, and the instances' batches share requests
// (merge_window; one instance is about 8,000 points).
func TestOTLPLargeHost(t *testing.T) {
	t.Parallel()
	root := harness.RepoRoot(t)
	runDir := t.TempDir()
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 16, QPs: 256, Interval: time.Second, LIF: true, Seed: 31})

	grpcPort := harness.FreePort(t)
	second := harness.WriteFile(t, "second.yaml", fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
        max_recv_msg_size_mib: 2
exporters:
  debug:
    verbosity: basic
service:
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
`, grpcPort))
	secondLog := &harness.LockedBuffer{}
	harness.StartTestBuildCollector(t, harness.ConfigArgs(second), nil, secondLog, false)

	override := harness.WriteFile(t, "first.yaml", `receivers:
  ernic:
    collection_interval: 2s
    metrics:
      ernic.qp.wqes.by_opcode:
        enabled: true
processors:
  memory_limiter:
    limit_mib: 1024
exporters:
  otlp_durable:
    tls:
      insecure: true
`)
	firstLog := &harness.LockedBuffer{}
	runCollectorLog(t, []string{
		"ERNIC_RUN_DIR=" + runDir,
		"ERNIC_OTLP_ENDPOINT=127.0.0.1:" + strconv.Itoa(grpcPort),
		"ERNIC_STATE_DIR=" + t.TempDir(),
	}, firstLog, filepath.Join(root, "config", "otlp.yaml"), override)

	// Three scrapes' worth of points at the second collector.
	const perScrapeMin = 16 * 256 * 12 // QP metrics alone, without opcode lines
	var total, requests, largest int
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		total, requests, largest = 0, 0, 0
		for _, m := range debugPointsRE.FindAllStringSubmatch(secondLog.String(), -1) {
			n, _ := strconv.Atoi(m[1])
			total += n
			requests++
			largest = max(largest, n)
		}
		if total >= 3*perScrapeMin {
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("second collector (2 MiB message limit): %d points in %d requests, the largest %d points", total, requests, largest)
	if total < 3*perScrapeMin {
		t.Errorf("%d points arrived within 90s, want at least 3 scrapes' %d", total, 3*perScrapeMin)
	}
	if requests == 0 || total/requests < 12000 {
		t.Errorf("%d points in %d requests: the instances' batches were not joined (merge_window)", total, requests)
	}
	for _, bad := range []string{"Dropping data", "Exporting failed", "ResourceExhausted", "larger than max"} {
		if strings.Contains(firstLog.String(), bad) || strings.Contains(secondLog.String(), bad) {
			t.Errorf("%q in a collector's log: a request was refused or dropped", bad)
		}
	}
}

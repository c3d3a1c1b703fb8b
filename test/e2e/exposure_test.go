// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// TestExposure runs each shipped configuration as it is (only the variables
// it requires set) and checks what it exposes: config/local.yaml listens on
// 0.0.0.0 for the Prometheus endpoint, which serves /metrics and nothing
// else, and on loopback for the health check; the push configurations listen
// nowhere beyond loopback.
func TestExposure(t *testing.T) {
	root := harness.RepoRoot(t)
	runDir := t.TempDir()
	writeRunDir(t, runDir, fixtures(time.Now()))
	promPort := harness.FreePort(t)

	for _, tc := range []struct {
		config string
		env    []string
		want   []string // every TCP listener of the process
	}{
		{"local.yaml", []string{"ERNIC_EXPORTER_PORT=" + strconv.Itoa(promPort)},
			[]string{"0.0.0.0:" + strconv.Itoa(promPort), "127.0.0.1:13133"}},
		{"prometheus-remote-write.yaml", []string{"ERNIC_REMOTE_WRITE_URL=http://127.0.0.1:9/api/v1/write", "ERNIC_STATE_DIR=" + t.TempDir()}, nil},
		{"otlp.yaml", []string{"ERNIC_OTLP_ENDPOINT=127.0.0.1:9", "ERNIC_STATE_DIR=" + t.TempDir()}, nil},
		{"otlphttp.yaml", []string{"ERNIC_OTLP_ENDPOINT=http://127.0.0.1:9", "ERNIC_STATE_DIR=" + t.TempDir()}, nil},
	} {
		t.Run(tc.config, func(t *testing.T) {
			cmd := runCollector(t, append(tc.env, "ERNIC_RUN_DIR="+runDir), filepath.Join(root, "config", tc.config))
			// Wait until the expected listeners are up; with none expected,
			// give the collector the time to open any it would.
			var got []string
			if tc.want == nil {
				time.Sleep(3 * time.Second)
			}
			for deadline := time.Now().Add(waitTimeout); ; time.Sleep(200 * time.Millisecond) {
				var err error
				if got, err = tcpListeners(cmd.Pid()); err != nil {
					t.Fatal(err)
				}
				// Go listens on 0.0.0.0 through a dual-stack [::] socket.
				for i, a := range got {
					if p, ok := strings.CutPrefix(a, "[::]:"); ok {
						got[i] = "0.0.0.0:" + p
					}
				}
				slices.Sort(got)
				if slices.Equal(got, tc.want) || time.Now().After(deadline) {
					break
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("listeners %v, want exactly %v", got, tc.want)
			}
			if tc.config != "local.yaml" {
				return
			}
			base := fmt.Sprintf("http://127.0.0.1:%d", promPort)
			for path, want := range map[string]int{
				"/metrics": http.StatusOK, "/": http.StatusNotFound, "/debug/pprof/": http.StatusNotFound,
				"/metrics/x": http.StatusNotFound, "/api/v1/query": http.StatusNotFound, "/-/healthy": http.StatusNotFound,
			} {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Errorf("GET %s: %v", path, err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("GET %s: %s, want %d", path, resp.Status, want)
				}
			}
			t.Logf("local.yaml listeners %v; the Prometheus port serves /metrics only", got)
		})
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// Package e2e runs the otelcol-ernic distribution as users run it, with
// config/local.yaml, against a run directory written from fixtures, and
// checks the Prometheus exposition against the metric contract
// (the metric table of docs/metrics.md): every family present with its type and exact
// label set, and values equal to what the fixture files hold.
//
// Run with `make e2e-test`; the e2e build tag keeps them out of `go test
// ./...`. OTELCOL_BIN names a collector binary already built; without it
// the tests run `make otelcol`.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// opcodeReceiver is the receiver part of the configuration overrides of
// the tests that check every metric: a 1s scrape and the off-by-default
// per-opcode metric on, and the delivery telemetry every second too (the
// dashboard's rates take a few samples). The metric name has dots, which --set=a::b=c
// splits into keys, so it comes from a file.
const opcodeReceiver = `receivers:
  ernic:
    collection_interval: 1s
    metrics:
      ernic.qp.wqes.by_opcode:
        enabled: true
  selftelemetry:
    collection_interval: 1s
`

// waitTimeout bounds how long the collector gets to serve the expected
// exposition (the e2e config scrapes every second).
const waitTimeout = 45 * time.Second

// validateEnv is the environment of `otelcol-ernic validate` for the shipped
// configurations: the variables that have no default, set to plausible
// values; every other ${env:...} keeps its default.
var validateEnv = []string{
	"ERNIC_REMOTE_WRITE_URL=http://127.0.0.1:9090/api/v1/write", // prometheus-remote-write.yaml
}

// validateEndpoints is ERNIC_OTLP_ENDPOINT per configuration: host:port for
// gRPC, a URL for HTTP.
var validateEndpoints = map[string]string{
	"otlp.yaml":     "127.0.0.1:4317",
	"otlphttp.yaml": "http://127.0.0.1:4318",
}

// overlays are the configurations in config/ that are added to others with
// a second --config, and what each is added to.
var overlays = map[string][]string{
	"debug.yaml":                        {"local.yaml"},
	"local-tls.yaml":                    {"local.yaml"},
	"fleet.yaml":                        {"prometheus-remote-write.yaml", "otlp.yaml", "otlphttp.yaml"},
	"prometheus-remote-write-auth.yaml": {"prometheus-remote-write.yaml"},
	"otlp-auth.yaml":                    {"otlp.yaml"},
	"otlphttp-auth.yaml":                {"otlphttp.yaml"},
}

// overlayEnv is the variables without a default that an overlay needs:
// files the test writes.
func overlayEnv(t *testing.T, overlay string) []string {
	t.Helper()
	switch overlay {
	case "local-tls.yaml":
		ca := testcert.NewCA(t, "validate CA")
		dir := t.TempDir()
		cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		ca.Server(t, "host").Write(t, cert, key)
		return []string{"ERNIC_EXPORTER_CERT_FILE=" + cert, "ERNIC_EXPORTER_KEY_FILE=" + key,
			"ERNIC_EXPORTER_TOKEN_FILE=" + harness.WriteFile(t, "token", "scrape-token\n")}
	case "prometheus-remote-write-auth.yaml", "otlp-auth.yaml", "otlphttp-auth.yaml":
		return []string{"ERNIC_PUSH_TOKEN_FILE=" + harness.WriteFile(t, "token", "push-token\n")}
	}
	return nil
}

// TestValidateConfigs: every configuration in config/ is valid for the
// distribution as it is (defaults of every ${env:...} that has one). The
// configurations that need an endpoint are also checked to fail without it,
// so that a missing variable stops the collector instead of sending nowhere.
// The overlays are validated on what they overlay (overlays), and those
// that need variables (the credentials' files) fail without them.
func TestValidateConfigs(t *testing.T) {
	bin := harness.CollectorBinary(t)
	root := harness.RepoRoot(t)
	configs, err := filepath.Glob(filepath.Join(root, "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range configs {
		names = append(names, filepath.Base(c))
	}
	for _, want := range []string{"local.yaml", "prometheus-remote-write.yaml", "otlp.yaml", "otlphttp.yaml", "fleet.yaml"} {
		if !slices.Contains(names, want) {
			t.Errorf("config/%s missing (have %v)", want, names)
		}
	}
	validate := func(env []string, configs ...string) ([]byte, error) {
		args := []string{"validate"}
		for _, c := range configs {
			args = append(args, "--config", filepath.Join(root, "config", c))
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Env = append(harness.CleanEnv(), env...)
		return cmd.CombinedOutput()
	}
	baseEnv := func(name string) []string {
		env := slices.Clone(validateEnv)
		if ep, ok := validateEndpoints[name]; ok {
			env = append(env, "ERNIC_OTLP_ENDPOINT="+ep)
		}
		return env
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if bases, ok := overlays[name]; ok {
				extra := overlayEnv(t, name)
				for _, base := range bases {
					if out, err := validate(append(baseEnv(base), extra...), base, name); err != nil || len(bytes.TrimSpace(out)) > 0 {
						t.Errorf("validate %s + %s: %v\n%s", base, name, err, out)
					}
					if len(extra) > 0 {
						if out, err := validate(baseEnv(base), base, name); err == nil {
							t.Errorf("%s + %s validates without %v; want an error\n%s", base, name, extra, out)
						}
					}
				}
				return
			}
			out, err := validate(baseEnv(name), name)
			if err != nil {
				t.Fatalf("otelcol-ernic validate --config config/%s: %v\n%s", name, err, out)
			}
			if len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("otelcol-ernic validate --config config/%s printed:\n%s", name, out)
			}
			// Without its endpoint, a push configuration must not validate.
			if name != "local.yaml" {
				if out, err := validate(nil, name); err == nil {
					t.Errorf("config/%s validates without its endpoint variable; want an error\n%s", name, out)
				}
			}
		})
	}
}

// startCollector runs the collector with config/local.yaml plus the e2e
// override file and then extra (more --config values), and stops it when
// the test ends, printing its log if the test failed.
func startCollector(t *testing.T, runDir string, promPort, healthPort int, extra ...string) *harness.Process {
	t.Helper()
	root := harness.RepoRoot(t)

	// The overrides of the test, merged over config/local.yaml: a 1s
	// scrape, the off-by-default per-opcode metric on, and every listener
	// on loopback. The metric name has dots, which --set=a::b=c splits
	// into keys, so it comes from a file.
	override := harness.WriteFile(t, "e2e.yaml", fmt.Sprintf(opcodeReceiver+`exporters:
  prometheus_text:
    endpoint: 127.0.0.1:${env:ERNIC_EXPORTER_PORT}
extensions:
  healthcheckv2:
    http:
      endpoint: 127.0.0.1:%d
`, healthPort))

	return harness.StartCollector(t, append([]string{
		"--config", filepath.Join(root, "config", "local.yaml"),
		"--config", override,
	}, harness.ConfigArgs(extra...)...), []string{
		"ERNIC_RUN_DIR=" + runDir,
		"ERNIC_EXPORTER_PORT=" + strconv.Itoa(promPort),
	}, nil, true)
}

// TestPrometheusContract runs the collector on a fixture run directory and
// checks every family of the metric contract and the fixtures' values.
func TestPrometheusContract(t *testing.T) {
	harness.CollectorBinary(t) // build first: the fixture files must be younger than the clock checks below
	runDir := t.TempDir()
	waitPastOwnStart(t)
	now := time.Now()
	insts := fixtures(now)
	writeRunDir(t, runDir, insts)

	promPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	for healthPort == promPort {
		healthPort = harness.FreePort(t)
	}
	c := startCollector(t, runDir, promPort, healthPort)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort)

	// Poll until the exposition satisfies every check (the first scrapes
	// may predate the collector's first export), then report the last
	// attempt's failures.
	want := expected(insts, now)
	deadline := time.Now().Add(waitTimeout)
	var problems []string
	var mfs map[string]*dto.MetricFamily
	for attempt := 0; ; attempt++ {
		select {
		case <-c.Exited():
			t.Fatalf("collector exited before serving the expected metrics: %v", c.Err())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var err error
		mfs, err = harness.Scrape(ctx, url)
		cancel()
		if err != nil {
			problems = []string{"scrape: " + err.Error()}
		} else {
			problems = check(mfs, want)
		}
		if len(problems) == 0 {
			break
		}
		if time.Now().After(deadline) {
			if mfs != nil {
				t.Logf("last exposition:\n%s", formatFamilies(mfs))
			}
			t.Fatalf("%s did not match the metric contract within %v (%d problems):\n  %s",
				url, waitTimeout, len(problems), strings.Join(problems, "\n  "))
		}
		time.Sleep(250 * time.Millisecond)
	}

	var names []string
	for _, f := range contract {
		names = append(names, f.name)
	}
	t.Logf("all %d families of the metric contract present with their types, labels and fixture values: %s",
		len(contract), strings.Join(names, ", "))

	// The health check answers on its loopback endpoint, every component
	// OK.
	if h, err := getHealth(healthPort); err != nil {
		t.Errorf("health check: %v", err)
	} else if h.code != http.StatusOK || h.Status != "StatusOK" || h.receiver().Status != "StatusOK" {
		t.Errorf("health check: %d %s, receiver %s, want 200 StatusOK for both\n%s", h.code, h.Status, h.receiver().Status, h.body)
	}

	// The collector listens on exactly the two loopback endpoints: no
	// telemetry server of its own, nothing on another address.
	listeners, err := tcpListeners(c.Pid())
	if err != nil {
		t.Errorf("listeners of the collector: %v", err)
	} else {
		wantL := []string{
			fmt.Sprintf("127.0.0.1:%d", promPort),
			fmt.Sprintf("127.0.0.1:%d", healthPort),
		}
		sort.Strings(wantL)
		if !slices.Equal(listeners, wantL) {
			t.Errorf("collector listens on %v, want exactly %v", listeners, wantL)
		}
	}
}

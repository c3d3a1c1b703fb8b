// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"gopkg.in/yaml.v3"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// metricDef is one metric of receiver/ernicreceiver/metadata.yaml.
type metricDef struct {
	Enabled    bool     `yaml:"enabled"`
	Unit       string   `yaml:"unit"`
	Attributes []string `yaml:"attributes"`
	Sum        *struct {
		Monotonic   bool   `yaml:"monotonic"`
		Temporality string `yaml:"aggregation_temporality"`
	} `yaml:"sum"`
	Gauge *struct{} `yaml:"gauge"`
}

// metricDefs reads the receiver's metric definitions: the test checks the
// OTLP output against them, not against a copied list.
func metricDefs(t *testing.T) map[string]metricDef {
	t.Helper()
	var md struct {
		Metrics map[string]metricDef `yaml:"metrics"`
	}
	readMetadata(t, &md)
	return md.Metrics
}

// readMetadata decodes receiver/ernicreceiver/metadata.yaml into v.
func readMetadata(t *testing.T, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "receiver", "ernicreceiver", "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// resourceAttributeKeys returns the resource attributes of metadata.yaml,
// sorted: those of every instance's resource.
func resourceAttributeKeys(t *testing.T) []string {
	t.Helper()
	var md struct {
		ResourceAttributes map[string]any `yaml:"resource_attributes"`
	}
	readMetadata(t, &md)
	var keys []string
	for k := range md.ResourceAttributes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// otlpSink is an OTLP/HTTP metrics endpoint on loopback that keeps what it
// receives (JSON encoding).
type otlpSink struct {
	mu  sync.Mutex
	got []pmetric.Metrics
	url string
}

func startSink(t *testing.T) *otlpSink {
	t.Helper()
	s := &otlpSink{}
	s.url = harness.ServeHTTP(t, otlpHandler(true, func(w http.ResponseWriter, req pmetricotlp.ExportRequest) {
		s.mu.Lock()
		s.got = append(s.got, req.Metrics())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	})) + "/v1/metrics"
	return s
}

// otlpHandler is an OTLP/HTTP metrics endpoint: it decodes each request
// (JSON when json, else protobuf) and passes it to handle, or answers 400
// Bad Request to one it cannot decode.
func otlpHandler(json bool, handle func(http.ResponseWriter, pmetricotlp.ExportRequest)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := readExportRequest(r, json)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		handle(w, req)
	})
}

// readExportRequest decodes an OTLP/HTTP metrics request: JSON or
// protobuf, gzip-compressed or not (Content-Encoding).
func readExportRequest(r *http.Request, json bool) (pmetricotlp.ExportRequest, error) {
	req := pmetricotlp.NewExportRequest()
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return req, err
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return req, err
	}
	if json {
		return req, req.UnmarshalJSON(raw)
	}
	return req, req.UnmarshalProto(raw)
}

func (s *otlpSink) batches() []pmetric.Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// runCollector starts otelcol-ernic with the given config files and
// environment, and stops it at the end of the test (its log printed when the
// test failed; one that has to be killed is not an error here).
func runCollector(t *testing.T, env []string, configs ...string) *harness.Process {
	t.Helper()
	return runCollectorLog(t, env, nil, configs...)
}

// runCollectorLog is runCollector with the collector's output in log.
func runCollectorLog(t *testing.T, env []string, log *harness.LockedBuffer, configs ...string) *harness.Process {
	t.Helper()
	return harness.StartCollector(t, harness.ConfigArgs(configs...), env, log, false)
}

// secondCollectorConfig writes the config of a second collector (the test
// build): OTLP/gRPC in on port, out through otlp_http with the settings
// given (indented under it).
func secondCollectorConfig(t *testing.T, name string, port int, otlpHTTP string) string {
	t.Helper()
	return harness.WriteFile(t, name, fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  otlp_http:
%sservice:
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`, port, otlpHTTP))
}

// fastQueueOverride writes a config added after a shipped OTLP config for
// the fault tests: a scrape every second, and the exporter (otlp_durable
// or otlp_http_durable) merging for mergeWindow and retrying at least
// every second, with extra (YAML lines indented under the exporter, or "").
func fastQueueOverride(t *testing.T, exporter string, mergeWindow time.Duration, extra string) string {
	t.Helper()
	return harness.WriteFile(t, exporter+"-fast.yaml", fmt.Sprintf(`receivers:
  ernic:
    collection_interval: 1s
exporters:
  %s:
    merge_window: %s
    retry_on_failure:
      max_interval: 1s
%s`, exporter, mergeWindow, extra))
}

// TestOTLPToSecondCollector: otelcol-ernic with config/otlp.yaml sends to a
// second collector (the test build, OTLP in, JSON out to the test). Every
// metric arrives as metadata.yaml defines it (one resource per instance,
// the cluster gauges in one without attributes); sums are monotonic,
// cumulative, and start when the simulated server process started.
func TestOTLPToSecondCollector(t *testing.T) {
	root := harness.RepoRoot(t)
	defs := metricDefs(t)
	sink := startSink(t)

	runDir := t.TempDir()
	s := harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 3, QPs: 3, Interval: 200 * time.Millisecond, LIF: true, Seed: 3})

	// The second collector: OTLP gRPC in, OTLP/HTTP JSON out to the sink.
	grpcPort := harness.FreePort(t)
	second := secondCollectorConfig(t, "second.yaml", grpcPort, "    metrics_endpoint: "+sink.url+"\n    encoding: json\n    compression: none\n")
	harness.StartTestBuildCollector(t, harness.ConfigArgs(second), nil, nil, false)

	// The first collector: the shipped otlp.yaml, scraping every second,
	// the per-opcode metric on so that every metric is checked, plain text
	// to the loopback receiver.
	override := harness.WriteFile(t, "first.yaml", opcodeReceiver+`exporters:
  otlp_durable:
    tls:
      insecure: true
`)
	runCollector(t, []string{
		"ERNIC_RUN_DIR=" + runDir,
		"ERNIC_OTLP_ENDPOINT=127.0.0.1:" + strconv.Itoa(grpcPort),
		"ERNIC_STATE_DIR=" + t.TempDir(),
	}, filepath.Join(root, "config", "otlp.yaml"), override)

	// Wait until every enabled metric has arrived with points of workers.
	type arrived struct {
		m   pmetric.Metric
		res pcommon.Map // its resource's attributes
	}
	seen := map[string]arrived{}
	deadline := time.Now().Add(waitTimeout)
	for len(seen) < len(defs) && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		for _, md := range sink.batches() {
			rms := md.ResourceMetrics()
			for i := range rms.Len() {
				sms := rms.At(i).ScopeMetrics()
				for j := range sms.Len() {
					ms := sms.At(j).Metrics()
					for k := range ms.Len() {
						seen[ms.At(k).Name()] = arrived{ms.At(k), rms.At(i).Resource().Attributes()}
					}
				}
			}
		}
	}
	resKeys := resourceAttributeKeys(t)
	for name := range defs {
		if _, ok := seen[name]; !ok {
			t.Errorf("metric %s never arrived through the second collector", name)
		}
	}

	hostName, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	starts := map[string]pcommon.Timestamp{}
	for _, inst := range s.Instances() {
		starts[strconv.Itoa(inst.ID)] = pcommon.NewTimestampFromTime(processStart(inst.PID))
	}
	checked, delivery := 0, 0
	for name, a := range seen {
		m := a.m
		var keys []string
		for k := range a.res.All() {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		// The instances' resources: metadata.yaml's attributes (host.name
		// turned on by the config) and the job and instance of
		// resource/host; the cluster gauges': the host only.
		host := []string{"host.name", "service.instance.id", "service.name"}
		if strings.HasPrefix(name, "otelcol.") {
			// The delivery telemetry: the host, and the ernic job that
			// resource/host gives the selftelemetry receiver's resource.
			job, _ := a.res.Get("service.name")
			if !slices.Equal(keys, host) || job.Str() != "ernic" {
				t.Errorf("%s: resource %v, want %v with service.name ernic", name, a.res.AsRaw(), host)
			}
			delivery++
			continue
		}
		switch name {
		case "ernic.instances", "ernic.instances.unpublished", "ernic.vms", "ernic.run_dir.readable":
			if !slices.Equal(keys, host) {
				t.Errorf("%s: resource attributes %v, want %v (the cluster's resource: the host)", name, keys, host)
			}
		default:
			want := slices.Sorted(slices.Values(append(slices.Clone(resKeys), host[1:]...)))
			if !slices.Equal(keys, want) {
				t.Errorf("%s: resource attributes %v, want metadata.yaml's and resource/host's %v", name, keys, want)
			}
		}
		if v, ok := a.res.Get("service.instance.id"); !ok || v.Str() != hostName {
			t.Errorf("%s: service.instance.id %v, want the host name %q", name, v.AsString(), hostName)
		}
		def, ok := defs[name]
		if !ok {
			t.Errorf("metric %s is not defined in metadata.yaml", name)
			continue
		}
		if m.Unit() != def.Unit {
			t.Errorf("%s: unit %q, metadata.yaml says %q", name, m.Unit(), def.Unit)
		}
		var dps pmetric.NumberDataPointSlice
		switch {
		case def.Sum != nil:
			if m.Type() != pmetric.MetricTypeSum || !m.Sum().IsMonotonic() || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				t.Errorf("%s: want a monotonic cumulative sum, got %s monotonic=%v", name, m.Type(), m.Type() == pmetric.MetricTypeSum && m.Sum().IsMonotonic())
				continue
			}
			dps = m.Sum().DataPoints()
		default:
			if m.Type() != pmetric.MetricTypeGauge {
				t.Errorf("%s: want a gauge, got %s", name, m.Type())
				continue
			}
			dps = m.Gauge().DataPoints()
		}
		for i := range dps.Len() {
			dp := dps.At(i)
			var keys []string
			for k := range dp.Attributes().All() {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			want := slices.Clone(def.Attributes)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("%s: attributes %v, metadata.yaml says %v", name, keys, want)
			}
			if def.Sum == nil || dp.Flags().NoRecordedValue() {
				continue
			}
			id, _ := a.res.Get("ernic.id")
			if want := starts[id.Str()]; dp.StartTimestamp() != want {
				t.Errorf("%s{ernic.id=%s}: start %v, want the server process start %v", name, id.Str(), dp.StartTimestamp(), want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no sum data point checked")
	}
	if b, ok := seen["otelcol.build.info"]; !ok || b.m.Gauge().DataPoints().Len() != 1 {
		t.Error("otelcol.build.info did not arrive through the second collector")
	} else if v, _ := b.m.Gauge().DataPoints().At(0).Attributes().Get("version"); v.Str() != harness.CollectorVersion(t) {
		t.Errorf("otelcol.build.info: version %q, want the binary's %q", v.Str(), harness.CollectorVersion(t))
	}
	t.Logf("OTLP through a second collector: %d metrics (%d of the delivery telemetry) in %d batches; %d sum points start at their process start", len(seen), delivery, len(sink.batches()), checked)
}

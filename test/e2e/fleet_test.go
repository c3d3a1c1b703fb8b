// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// fleetHosts are TestFleet's host names, each set in a UTS namespace of
// its own.
var fleetHosts = []string{"gpu-fleet-a", "gpu-fleet-b", "gpu-fleet-c"}

// fleetOverride scrapes every second, the delivery telemetry too, and
// turns on the per-opcode metric (off by default), so that every panel of
// the dashboard has series.
const fleetOverride = "receivers:\n  ernic:\n    collection_interval: 1s\n    metrics:\n      ernic.qp.wqes.by_opcode:\n        enabled: true\n  selftelemetry:\n    collection_interval: 1s\n"

// fleetBackend is one Prometheus of TestFleet and the instance label it
// gives a host: its name when the host pushes, its scrape target when it
// is scraped.
type fleetBackend struct {
	name     string
	p        *harness.Prometheus
	instance func(h *fleetHost) string
	// scraped: the hosts' config/local.yaml endpoints, which have no push
	// exporter and so no delivery series but the build info.
	scraped bool
}

// fleetHost is one host of TestFleet: its simulator and its three
// collectors, one per shipped pipeline.
type fleetHost struct {
	name           string
	sim            *sim.Sim
	runDir         string
	pullPort       int
	pull, rw, otlp *harness.Process
}

// TestFleet: three hosts with real host names of their own (unshare --uts),
// run directories with the same instance ids, and for each the shipped
// configs unchanged: config/prometheus-remote-write.yaml into one
// Prometheus 2.42, config/otlphttp.yaml into one Prometheus 3 (its OTLP
// receiver, with the promotion deploy/prometheus/otlp.yml ships) and
// config/local.yaml scraped by a third Prometheus. Every backend has, per
// host, every series of that host's own endpoint with its values and no
// other labels than the host's job and instance; no request is rejected;
// every dashboard query filtered to one host returns only that host, and
// with All all of them; an instance killed on one host and a host whose
// collector stops alert for that host only.
func TestFleet(t *testing.T) {
	harness.RequireRoot(t, "give each host a host name of its own (unshare --uts)")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := harness.RepoRoot(t)
	harness.CollectorBinary(t)
	board, rules, scaled := loadBoardAndRules(t)

	// The backends.
	ruleDir := t.TempDir()
	rw := rulesPrometheus(t, ruleDir, dashboards.ScaleDuration(5*time.Minute, alertScale))
	promote, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "otlp.yml"))
	if err != nil {
		t.Fatal(err)
	}
	p3 := harness.StartPrometheus(t, harness.Prometheus3Binary(t), "", 60*time.Second, string(promote), "--web.enable-otlp-receiver")
	override := harness.WriteFile(t, "fleet.yaml", fleetOverride)

	// The hosts.
	var hosts []*fleetHost
	var targets []string
	for i, name := range fleetHosts {
		h := startFleetHost(ctx, t, name, int64(11+i), rw.WriteURL(), override)
		h.otlp = startHostCollector(t, name, []string{"ERNIC_RUN_DIR=" + h.runDir, "ERNIC_OTLP_ENDPOINT=" + p3.URL("/api/v1/otlp"), "ERNIC_STATE_DIR=" + t.TempDir()},
			filepath.Join(root, "config", "otlphttp.yaml"), override)
		hosts = append(hosts, h)
		targets = append(targets, fmt.Sprintf("'127.0.0.1:%d'", h.pullPort))
	}
	scr := harness.StartPrometheus(t, harness.PrometheusBinary(t), "", 60*time.Second, fmt.Sprintf(
		"global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: ernic\n    static_configs:\n      - targets: [%s]\n", strings.Join(targets, ", ")))

	backends := []fleetBackend{
		{"remote write (Prometheus 2.42)", rw, func(h *fleetHost) string { return h.name }, false},
		{"OTLP (Prometheus 3)", p3, func(h *fleetHost) string { return h.name }, false},
		{"scrape (Prometheus 2.42)", scr, func(h *fleetHost) string { return fmt.Sprintf("127.0.0.1:%d", h.pullPort) }, true},
	}

	// Per host and backend: the series of the host's own endpoint, with
	// its values, under the host's instance and the job ernic.
	for _, h := range hosts {
		url := fmt.Sprintf("http://127.0.0.1:%d/metrics", h.pullPort)
		for _, b := range backends {
			var labelNames map[string]bool
			eventually(t, 2*waitTimeout, fmt.Sprintf("%s: the series of %s", b.name, h.name), func() []string {
				want, err := endpointSeries(ctx, url)
				if err != nil {
					return []string{err.Error()}
				}
				got, names, err := backendSeries(ctx, b.p, b.instance(h))
				if err != nil {
					return []string{err.Error()}
				}
				labelNames = names
				problems := compareHostSeries(want, got)
				jobs, err := b.p.Vector(ctx, fmt.Sprintf(`count by (job) ({__name__=~"ernic_.+", instance=%q})`, b.instance(h)), time.Now())
				if err != nil || len(jobs) != 1 || jobs[0].Metric["job"] != "ernic" {
					problems = append(problems, fmt.Sprintf("job labels %v (%v), want ernic only", jobs, err))
				}
				return problems
			})
			t.Logf("%s, %s: labels %v", b.name, h.name, slices.Sorted(maps.Keys(labelNames)))
		}
	}
	for handler, p := range map[string]*harness.Prometheus{"/api/v1/write": rw, "/api/v1/otlp/v1/metrics": p3} {
		if bad := p.RequestsNot2xx(t, handler); len(bad) > 0 {
			t.Errorf("%s answered other than 2xx: %v", handler, bad)
		}
	}
	for _, h := range hosts {
		for what, c := range map[string]*harness.Process{"remote write": h.rw, "OTLP": h.otlp} {
			if l := c.Log.String(); strings.Contains(l, "rejected") || strings.Contains(l, "Dropping data") {
				t.Errorf("%s collector of %s logged a rejection:\n%s", what, h.name, l)
			}
		}
	}

	// The dashboard's rates need a few samples of every host.
	for _, b := range backends {
		eventually(t, waitTimeout, b.name+": 4 samples of every host within 6s", func() []string {
			v, err := b.p.Vector(ctx, `count_over_time(ernic_instances[6s]) >= 4`, time.Now())
			if err != nil || len(v) != len(hosts) {
				return []string{fmt.Sprintf("%d hosts (%v)", len(v), err)}
			}
			return nil
		})
		checkFleetDashboard(ctx, t, board, b, hosts)
	}

	// Alerts, evaluated by the remote-write Prometheus: an instance killed
	// on host b, then host c's collector stopped.
	rulesText, err := scaled.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ruleDir, "alerts.yaml"), rulesText, 0o644); err != nil {
		t.Fatal(err)
	}
	reloadRules(ctx, t, rw, len(rules.Alerts()))
	if err := hosts[1].sim.Kill(1); err != nil {
		t.Fatal(err)
	}
	hosts[2].rw.Stop(15 * time.Second)
	firing := func(name string) ([]string, error) {
		var data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		}
		if err := rw.GetAPI(ctx, "/api/v1/alerts", &data); err != nil {
			return nil, err
		}
		var out []string
		for _, a := range data.Alerts {
			if a.Labels["alertname"] == name && a.State == "firing" {
				out = append(out, a.Labels["instance"]+"/"+a.Labels["ernic_id"])
			}
		}
		slices.Sort(out)
		return out, nil
	}
	for _, want := range []struct{ alert, fires string }{
		{"ErnicInstanceDown", hosts[1].name + "/1"},
		{"ErnicHostNoData", hosts[2].name + "/"},
	} {
		eventually(t, waitTimeout, want.alert+" for "+want.fires+" only", func() []string {
			got, err := firing(want.alert)
			if err != nil || !slices.Equal(got, []string{want.fires}) {
				return []string{fmt.Sprintf("firing %v (%v), want [%s]", got, err, want.fires)}
			}
			return nil
		})
		t.Logf("%s fires for %s only", want.alert, want.fires)
	}
	if got, err := firing("ErnicNoData"); err != nil || len(got) > 0 {
		t.Errorf("ErnicNoData firing %v (%v) while two hosts publish", got, err)
	}
}

// endpointSeries returns the ernic series of a host's /metrics by
// harness.SeriesKey, with their values; an empty label is no label, as a
// Prometheus stores it.
func endpointSeries(ctx context.Context, url string) (map[string]float64, error) {
	mfs, err := harness.Scrape(ctx, url)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "ernic_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			lm := model.Metric{model.MetricNameLabel: model.LabelValue(name)}
			for _, l := range m.GetLabel() {
				if l.GetValue() != "" {
					lm[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
				}
			}
			out[harness.SeriesKey(lm)] = sampleValue(m, mf.GetType())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no ernic series", url)
	}
	return out, nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The dashboard and the alerting rules of dashboards/ against what the
// collector really writes: the simulator (traffic, a device reset, an FLR,
// LIF errors, drops and ring errors, a killed and restarted server, a
// stalled stats file, a lost connection, a stopped collector and a run
// directory moved away from it), otelcol-ernic with
// config/prometheus-remote-write.yaml, and a real Prometheus (Debian's 2.42)
// that evaluates the rules.
//
// Time runs alertScale times faster for the rules: the Prometheus loads a
// copy of dashboards/alerts.yaml whose `for:` durations and range windows
// are divided by alertScale (dashboards.RuleFile.Scaled), its query
// lookback is 5m / alertScale instead of 5m, and it evaluates every second.
// Numeric thresholds are the shipped ones (the stats file must be 30s old).

// alertScale is how much faster the test copy of the rules runs.
const alertScale = 20

// harnessVars are the values of Grafana's interval variables for the
// harness (1s collections): $__rate_interval is four samples and more.
var harnessVars = dashboards.Vars{RateInterval: "6s", Interval: "2s"}

// loadBoardAndRules loads the shipped dashboard and alerting rules, and
// the rules scaled alertScale times faster for the harness.
func loadBoardAndRules(t *testing.T) (board *dashboards.Dashboard, rules, scaled *dashboards.RuleFile) {
	t.Helper()
	root := harness.RepoRoot(t)
	board, err := dashboards.LoadDashboard(filepath.Join(root, dashboards.DashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	rules, err = dashboards.LoadRules(filepath.Join(root, dashboards.RulesPath))
	if err != nil {
		t.Fatal(err)
	}
	scaled, err = rules.Scaled(alertScale)
	if err != nil {
		t.Fatal(err)
	}
	return board, rules, scaled
}

// rulesPrometheus is a Prometheus like startPrometheus's that also
// evaluates the rule files matching ruleGlob every second, with the query
// lookback given. It is started without rules; loadRules adds them.
func rulesPrometheus(t *testing.T, ruleDir string, lookback string) *harness.Prometheus {
	t.Helper()
	conf := fmt.Sprintf("global:\n  scrape_interval: 15s\n  evaluation_interval: 1s\nrule_files:\n  - %s/*.yaml\nscrape_configs: []\n", ruleDir)
	return harness.StartPrometheus(t, harness.PrometheusBinary(t), "", 60*time.Second, conf,
		"--web.enable-remote-write-receiver", "--storage.tsdb.retention.time=1d", "--query.lookback-delta="+lookback)
}

// TestDashboardsAndAlerts: every dashboard query, rule expression and documented
// example returns data, and every alert goes pending, fires and resolves,
// on the collector's output of a simulator that is made to misbehave.
func TestDashboardsAndAlerts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	board, rules, scaled := loadBoardAndRules(t)
	harness.CollectorBinary(t)

	// The world: Prometheus (rules not loaded yet), the simulator (a
	// manager and three workers, 500ms writes, LIF counters), the
	// collector writing to Prometheus.
	start := time.Now()
	ruleDir := t.TempDir()
	r := newRemoteWriteTo(t, sim.Options{Instances: 4, QPs: 4, Interval: 500 * time.Millisecond, LIF: true, Seed: 23},
		rulesPrometheus(t, ruleDir, dashboards.ScaleDuration(5*time.Minute, alertScale)))
	s := r.sim
	c := r.startCollector()

	p := r.prom
	instant := func(q string) (model.Vector, error) { return p.Vector(ctx, q, time.Now()) }
	eventually(t, waitTimeout, "traffic of every worker in Prometheus", func() []string {
		v, err := instant(`rate(ernic_rdma_bytes_total[5s]) > 0 and on (ernic_id) ernic_qp_count == 4`)
		if err != nil || len(v) != 3 {
			return []string{fmt.Sprintf("workers with traffic and 4 QPs: %v (%v)", v, err)}
		}
		return nil
	})
	t.Logf("traffic of the 3 workers in Prometheus %v after the start", time.Since(start).Round(time.Millisecond))

	a := loadAlerts(t, ctx, p, ruleDir, scaled, len(rules.Alerts()))

	// The LIF burst: 2% of instance 3's RDMA packet rate as requester
	// sequence errors (20 times the alert's 0.1%), plus drops and ring
	// errors, every 500ms until the alert fires.
	burstStart := time.Now()
	stopBurst := startLIFBurst(s, 3, lifBurst(t, ctx, p))

	// Everything at once, on different instances.
	a.provoke("down", alertKey{name: "ErnicInstanceDown", id: "1"}, "sim.Kill(1): the manager's server process dies", func() error { return s.Kill(1) })
	a.provoke("flr", alertKey{name: "ErnicDeviceReset", id: "3"}, "sim.FLR(3)", func() error { return s.FLR(3) })
	a.provoke("reset", alertKey{name: "ErnicDeviceReset", id: "4"}, "sim.Reset(4): device reset", func() error { return s.Reset(4) })
	a.provoke("lost", alertKey{name: "ErnicConnectionLost", id: "4"}, "sim.Disconnect(4)", func() error { return s.Disconnect(4) })
	a.provoke("stuck", alertKey{name: "ErnicStatsStuck", id: "2"}, "sim.Stall(2)", func() error { return s.Stall(2) })
	a.ev["errors"] = &provoked{key: alertKey{name: "ErnicRDMAErrors", id: "3", counter: "rdma_req_rx_pkt_seq_err"},
		how: "sim.LIFBurst(3) every 500ms", at: burstStart}

	a.end("down", "sim.Restart(1)", func() error { return s.Restart(1) })
	a.ev["restart"] = &provoked{key: alertKey{name: "ErnicInstanceRestarted", id: "1"}, how: "sim.Restart(1) after the kill", at: a.ev["down"].ends}
	a.end("lost", "sim.Resume(4)", func() error { return s.Resume(4) })
	a.end("errors", "stopping the bursts", stopBurst)
	a.end("stuck", "sim.Resume(2)", func() error { return s.Resume(2) })
	a.waitFiring("flr")
	a.waitFiring("reset")
	a.waitFiring("restart")
	a.waitResolved("down", "lost", "errors", "stuck", "flr", "reset", "restart")

	// No data: the collector stops (SIGTERM), then comes back.
	a.ev["nodata"] = &provoked{key: alertKey{name: "ErnicNoData"}, how: "collector stopped (SIGTERM)", at: time.Now()}
	// The only host falls silent too: ErnicHostNoData names it (TestFleet
	// shows it names that host alone among several).
	a.ev["hostnodata"] = &provoked{key: alertKey{name: "ErnicHostNoData"}, how: "collector stopped (SIGTERM)", at: a.ev["nodata"].at}
	// Its build info stops too: ErnicDeliverySilent, after its 10m (30s).
	a.ev["silent"] = &provoked{key: alertKey{name: "ErnicDeliverySilent"}, how: "collector stopped (SIGTERM)", at: a.ev["nodata"].at}
	a.must(c.Signal(syscall.SIGTERM))
	select {
	case <-c.Exited():
	case <-time.After(15 * time.Second):
		t.Fatal("the collector did not stop within 15s of SIGTERM")
	}
	a.waitFiring("hostnodata")
	a.waitFiring("nodata")
	a.waitFiring("silent")
	// The collector comes back on a run directory that is not there
	// (rocm-ernic stopped, or a wrong ERNIC_RUN_DIR): it publishes only
	// ernic_run_dir_readable 0, so the no-data alerts go on and
	// ErnicRunDirUnreadable names the cause. The simulator's writes fail
	// meanwhile, as a server's would.
	a.must(os.Rename(r.runDir, r.runDir+".away"))
	a.provoke("rundir", alertKey{name: "ErnicRunDirUnreadable"}, "collector started again with its run directory moved away", func() error {
		r.startCollector()
		return nil
	})
	for _, name := range []string{"nodata", "hostnodata"} {
		a.ev[name].how += "; ended by moving the run directory back under the restarted collector"
	}
	// The restarted collector sends its build info at once, run directory
	// or not.
	a.ev["silent"].ends = a.ev["rundir"].at
	a.ev["silent"].how += "; ended by the restart"
	a.end("rundir", "moving the run directory back", func() error {
		a.ev["nodata"].ends, a.ev["hostnodata"].ends = time.Now(), time.Now()
		return os.Rename(r.runDir+".away", r.runDir)
	})
	a.waitResolved("rundir", "nodata", "hostnodata", "silent")
	// A few collections after the restart, for the instant queries.
	eventually(t, waitTimeout, "data again", func() []string {
		if v, err := instant(`count(rate(ernic_stats_writes_total[6s]) > 0)`); err != nil || len(v) != 1 || v[0].Value != 3 {
			return []string{fmt.Sprintf("workers writing: %v (%v)", v, err)}
		}
		return nil
	})
	stop := time.Now()

	t.Run("alert_cycles", a.checkCycles("down", "restart", "flr", "reset", "errors", "stuck", "lost", "nodata", "hostnodata", "silent", "rundir"))
	// The other delivery alerts need a failing backend (TestDeliveryAlerts
	// provokes them), and ErnicDeliverySilent's shipped expression 10
	// minutes of silence: its scaled copy fired and resolved above.
	here := slices.DeleteFunc(rules.Alerts(), func(r dashboards.Rule) bool {
		return strings.HasPrefix(r.Alert, "ErnicDelivery")
	})
	t.Run("queries_return_data", func(t *testing.T) { checkQueriesReturnData(t, ctx, p, board, here, start, stop) })
	if share, err := p.ScalarAt(ctx, `avg(rate(ernic_rdma_bytes_total{role="worker"}[30s]) / (rate(ernic_rdma_bytes_total{role="worker"}[30s]) + rate(ernic_ip_bytes_total{role="worker"}[30s])))`, stop); err == nil {
		t.Logf("RDMA share of all bytes, workers' average: %.3f", share)
	}
	t.Logf("run took %v", time.Since(start).Round(time.Second))
}

// loadAlerts gives the Prometheus p the scaled rules (n alerting rules) in
// ruleDir, reloads it (SIGHUP) and starts watching its alerts; no alert may
// be active before anything was provoked.
func loadAlerts(t *testing.T, ctx context.Context, p *harness.Prometheus, ruleDir string, scaled *dashboards.RuleFile, n int) *alertRun {
	t.Helper()
	b, err := scaled.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ruleDir, "alerts.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	reloadRules(ctx, t, p, n)
	a := &alertRun{t: t, watch: watchAlerts(ctx, p, 200*time.Millisecond), ev: map[string]*provoked{}}
	time.Sleep(2 * time.Second)
	if keys := a.watch.Keys(); len(keys) > 0 {
		t.Fatalf("alerts active before anything was provoked: %v", keys)
	}
	return a
}

// lifBurst is the LIF counters added to instance 3 every 500ms: 2% of its
// RDMA packet rate as requester sequence errors, plus drops and ring
// errors.
func lifBurst(t *testing.T, ctx context.Context, p *harness.Prometheus) map[string]uint64 {
	t.Helper()
	pkts, err := p.ScalarAt(ctx, `sum(rate(ernic_lif_counter_total{ernic_id="3",counter=~"(rx|tx)_rdma_ucast_packets"}[10s]))`, time.Now())
	if err != nil || pkts <= 0 {
		t.Fatalf("instance 3's RDMA packet rate: %v (%v)", pkts, err)
	}
	burst := map[string]uint64{
		"rdma_req_rx_pkt_seq_err": uint64(math.Ceil(0.02 * pkts / 2)),
		"rx_ucast_drop_packets":   25,
		"tx_queue_error":          2,
		"rx_desc_data_error":      1,
	}
	background, _ := p.ScalarAt(ctx, `sum(rate(ernic_lif_counter_total{counter=~"rdma_(req|resp)_.+"}[1m])) / sum(rate(ernic_lif_counter_total{counter=~"(rx|tx)_rdma_ucast_packets"}[1m]))`, time.Now())
	t.Logf("instance 3: %.0f RDMA packets/s; burst of %v every 500ms; the simulator's own RDMA errors so far: %.2g per RDMA packet (alert above 0.001)",
		pkts, burst, background)
	return burst
}

// startLIFBurst adds burst to instance id's LIF counters now and every
// 500ms until stop is called; stop returns the error that ended the bursts
// early, if one did.
func startLIFBurst(s *sim.Sim, id int, burst map[string]uint64) (stop func() error) {
	stopBurst := make(chan struct{})
	burstDone := make(chan error, 1)
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := s.LIFBurst(id, burst); err != nil {
				burstDone <- err
				return
			}
			select {
			case <-stopBurst:
				burstDone <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return func() error {
		close(stopBurst)
		return <-burstDone
	}
}

// checkQueriesReturnData: every dashboard query (but the VM row's), the
// expression of each rule of rules and every documented example returns
// series. Range
// queries over the whole run from start to stop, as a panel or annotation
// shows them; instant ones at stop, over the whole run for $__range.
func checkQueriesReturnData(t *testing.T, ctx context.Context, p *harness.Prometheus, board *dashboards.Dashboard, rules []dashboards.Rule, start, stop time.Time) {
	vars := harnessVars
	vars.Range = fmt.Sprintf("%ds", int(math.Ceil(stop.Sub(start).Seconds())))
	count := func(q string, rangeQuery bool) (int, error) {
		if rangeQuery {
			m, err := p.QueryRange(ctx, q, start, stop, 2*time.Second)
			return len(m), err
		}
		v, m, err := p.Query(ctx, q, stop)
		return len(v) + len(m), err
	}
	var lines []string
	for _, q := range board.Queries {
		// The VM metrics row reads the guests' exporters, not the
		// collector: TestVMRow proves it against them.
		if dashboards.GuestQuery(q) {
			continue
		}
		expr, err := dashboards.Substitute(q.Expr, vars)
		if err != nil {
			t.Fatal(err)
		}
		n, err := count(expr, !q.Instant)
		lines = append(lines, fmt.Sprintf("%3d  %s", n, q.Where))
		if err != nil || n == 0 {
			t.Errorf("%s: %d series (%v)\n%s", q.Where, n, err, expr)
		}
	}
	for _, a := range rules {
		n, err := count(a.Expr, true)
		lines = append(lines, fmt.Sprintf("%3d  rule %s (shipped expression)", n, a.Alert))
		if err != nil || n == 0 {
			t.Errorf("rule %s: %d series over the run (%v)\n%s", a.Alert, n, err, a.Expr)
		}
	}
	section, err := dashboards.DashboardsDoc(filepath.Join(harness.RepoRoot(t), dashboards.DashboardsDocPath))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range dashboards.PromQLBlocks(section) {
		n, err := count(e, true)
		lines = append(lines, fmt.Sprintf("%3d  documented example %d: %s", n, i+1, e))
		if err != nil || n == 0 {
			t.Errorf("documented example %q: %d series (%v)", e, n, err)
		}
	}
	t.Logf("series returned (range queries %s..%s, step 2s; instant at the end), $__rate_interval=%s $__range=%s:\n%s",
		start.Format("15:04:05"), stop.Format("15:04:05"), vars.RateInterval, vars.Range, strings.Join(lines, "\n"))
}

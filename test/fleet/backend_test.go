// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/dashboards"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// backend is the fleet's Thanos and what watches it: three receivers in one
// hashring (replication factor 2) with the tenant's limits, a querier over
// them, a ruler evaluating the shipped alerting rules through the querier,
// a meta-monitoring Prometheus that scrapes the receivers (the number
// receive's 429 limit reads, and the request rates the test reports), and
// the reference Prometheus, which every host also writes to and which is
// never stopped.
type backend struct {
	receivers []*harness.ThanosReceiver
	query     *harness.Prometheus
	ruler     *harness.Prometheus
	meta      *harness.Prometheus
	reference *harness.Prometheus
	// limitsFile is receive's limits configuration, reloaded on change.
	limitsFile string
}

// Thanos v0.42.4's receive limits (pkg/receive/limiter*.go, handler.go):
//   - write.global.max_concurrency: a gate; a request over it waits, no
//     status (a client that gives up while waiting gets a 500);
//   - write.tenants.<t>.request (size_bytes_limit, on the body and on it
//     decompressed; series_limit; samples_limit): 413, which no
//     remote-write client retries, so a request over them is lost;
//   - head_series_limit: 429 "tenant is above active series limit", the
//     only 429 receive answers, without Retry-After, while the value of
//     global.meta_monitoring_limit_query (a PromQL query at
//     meta_monitoring_url, run every 15 s) is at or above the limit.
//
// The request limits are the shipped remote-write configuration's own
// bounds (max_batch_size_bytes, max_samples_per_send), so a catch-up that
// merged batches past them would be refused. The query is the tenant's
// ingest rate rather than its head series, which turns the 429 into the
// load shedding the catch-up meets: while the tenant's receivers appended
// more than ingestLimitFactor times the fleet's steady rate over the last
// 30 s, every write of the tenant is answered 429 until the next query
// finds the rate lower. 30 s: a backlog of more than half a minute,
// delivered within half a minute, meets it.
const (
	maxConcurrency    = 4
	requestBytesLimit = 3_000_000
	requestSamples    = 2000
	ingestLimitFactor = 2
	ingestRateQuery   = `sum by (tenant) (rate(prometheus_tsdb_head_samples_appended_total{tenant="` + tenant + `"}[30s]))`
	// tooFarInFuture is receive's --tsdb.too-far-in-future.time-window:
	// without it one host whose clock runs an hour ahead moves the tenant's
	// head an hour ahead, and receive refuses (409) every other host's
	// samples as older than its appendable window.
	tooFarInFuture = 10 * time.Minute
)

// ruleScale is how much faster time runs for the ruler's copy of the
// shipped rules (their `for:` and range windows divided, the querier's
// lookback 5m/ruleScale): a 4-minute outage then outlasts ErnicNoData's
// lookback and `for:`, and a 5 s scrape still leaves 12 samples in the
// lookback.
const ruleScale = 5

// limits is receive's limits configuration with the tenant's ingest limit
// (samples appended per second, over the receivers).
func (b *backend) limits(ingestLimit uint64) string {
	return fmt.Sprintf(`write:
  global:
    max_concurrency: %d
    meta_monitoring_url: %s
    meta_monitoring_limit_query: '%s'
  tenants:
    %s:
      request:
        size_bytes_limit: %d
        series_limit: %d
        samples_limit: %d
      head_series_limit: %d
`, maxConcurrency, b.meta.URL(""), ingestRateQuery, tenant, requestBytesLimit, requestSamples, requestSamples, ingestLimit)
}

// startBackend starts the backend; the ingest limit is set later
// (setIngestLimit), once the fleet's steady rate is known.
func startBackend(ctx context.Context, t *testing.T, s settings) *backend {
	t.Helper()
	b := &backend{}
	b.meta = harness.StartPrometheus(t, harness.PrometheusBinary(t), "", 60*time.Second, harness.RemoteWriteConfig, "--storage.tsdb.retention.time=1d")
	b.limitsFile = filepath.Join(t.TempDir(), "limits.yaml")
	// No limit until the fleet's steady rate is known: 1e12 samples a second.
	if err := os.WriteFile(b.limitsFile, []byte(b.limits(1e12)), 0o644); err != nil {
		t.Fatal(err)
	}
	b.receivers = harness.StartThanosReceivers(t, s.thanos, harness.ThanosReceiveOptions{
		Receivers: 3, ReplicationFactor: 2, LimitsFile: b.limitsFile,
		Args: []string{"--tsdb.too-far-in-future.time-window=" + tooFarInFuture.String()},
	})
	var targets, stores []string
	for _, r := range b.receivers {
		targets = append(targets, fmt.Sprintf("'127.0.0.1:%d'", r.HTTPPort))
		stores = append(stores, r.StoreAddr())
	}
	// chain: receive's replicas hold the same timestamps; the default
	// penalty deduplication (for Prometheus pairs, whose timestamps differ)
	// skips samples where one replica has a gap, e.g. the killed receiver's.
	// store.unhealthy-timeout: a receiver down longer is dialled afresh;
	// otherwise its connection's gRPC backoff (up to 2 minutes) kept the
	// querier from using the receivers for up to a minute after an outage.
	b.query = harness.StartThanosQuery(ctx, t, s.thanos, stores, "--deduplication.func=chain", "--store.unhealthy-timeout=30s",
		"--query.lookback-delta="+dashboards.ScaleDuration(5*time.Minute, ruleScale))
	b.reference = harness.StartRemoteWritePrometheus(t, "", "1d")
	b.ruler = harness.StartThanosRule(t, s.thanos, b.query.URL(""), time.Second, []string{scaledRules(t)})
	if err := b.meta.Reconfigure(fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: thanos-receive
    static_configs:
      - targets: [%s]
  - job_name: thanos-rule
    static_configs:
      - targets: ['127.0.0.1:%d']
`, strings.Join(targets, ", "), b.ruler.Port)); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the meta-monitoring Prometheus scrapes every receiver", func() []string {
		v, err := b.meta.Vector(ctx, `up{job="thanos-receive"} == 1`, time.Now())
		if err != nil || len(v) != len(b.receivers) {
			return []string{fmt.Sprintf("%d receivers up (%v)", len(v), err)}
		}
		return nil
	})
	return b
}

// scaledRules writes the shipped alerting rules, scaled ruleScale times
// faster (dashboards.RuleFile.Scaled), to a file for the ruler.
func scaledRules(t *testing.T) string {
	t.Helper()
	rules, err := dashboards.LoadRules(filepath.Join(harness.RepoRoot(t), dashboards.RulesPath))
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := rules.Scaled(ruleScale)
	if err != nil {
		t.Fatal(err)
	}
	text, err := scaled.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return harness.WriteFile(t, "alerts.yaml", string(text))
}

// setIngestLimit sets the tenant's ingest limit and waits until every
// receiver has reloaded it.
func (b *backend) setIngestLimit(ctx context.Context, t *testing.T, limit uint64) {
	t.Helper()
	before := b.limitReloads(ctx, t)
	if err := os.WriteFile(b.limitsFile, []byte(b.limits(limit)), 0o644); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "every receiver reloads the limits", func() []string {
		var problems []string
		for i, n := range b.limitReloads(ctx, t) {
			if n <= before[i] {
				problems = append(problems, b.receivers[i].Name+" has not reloaded its limits")
			}
		}
		return problems
	})
}

// limitReloads is each receiver's thanos_receive_limits_config_reload_total.
func (b *backend) limitReloads(ctx context.Context, t *testing.T) []float64 {
	t.Helper()
	var out []float64
	for _, r := range b.receivers {
		mfs, err := harness.Scrape(ctx, r.MetricsURL())
		if err != nil {
			t.Fatal(err)
		}
		n := 0.0
		for _, m := range mfs["thanos_receive_limits_config_reload_total"].GetMetric() {
			n += m.GetCounter().GetValue()
		}
		out = append(out, n)
	}
	return out
}

// metaScalar evaluates q, which must return one series, on the
// meta-monitoring Prometheus at time at; 0 when it returns none.
func (b *backend) metaScalar(ctx context.Context, q string, at time.Time) (float64, error) {
	v, err := b.meta.Vector(ctx, q, at)
	if err != nil || len(v) == 0 {
		return 0, err
	}
	if len(v) > 1 {
		return 0, fmt.Errorf("%s: %d series, want 1", q, len(v))
	}
	return float64(v[0].Value), nil
}

// answers is the remote-write requests the receivers answered from `from`
// to `to`, by HTTP code (their http_requests_total, through restarts).
func (b *backend) answers(ctx context.Context, from, to time.Time) (map[string]float64, error) {
	v, err := b.meta.Vector(ctx, fmt.Sprintf(`sum by (code) (increase(http_requests_total{handler="receive"}[%s]))`, promDuration(to.Sub(from))), to)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range v {
		out[string(s.Metric["code"])] = float64(s.Value)
	}
	return out, nil
}

// ruleFailures is when the ruler's evaluations failed (its
// prometheus_rule_evaluation_failures_total grew) between from and to: the
// first and last second, zero when never.
func (b *backend) ruleFailures(ctx context.Context, from, to time.Time) (first, last time.Time, err error) {
	m, err := b.meta.QueryRange(ctx, `sum(increase(prometheus_rule_evaluation_failures_total{job="thanos-rule"}[3s])) > 0`, from, to, time.Second)
	if err != nil {
		return first, last, err
	}
	for _, ss := range m {
		for _, p := range ss.Values {
			if first.IsZero() {
				first = p.Timestamp.Time()
			}
			last = p.Timestamp.Time()
		}
	}
	return first, last, nil
}

// newestSamples is the time of each host's newest ernic_instances sample
// in the backend, through the querier (within its lookback).
func (b *backend) newestSamples(ctx context.Context) (map[string]time.Time, error) {
	v, err := b.query.Vector(ctx, fmt.Sprintf(`max by (instance) (timestamp(ernic_instances{tenant_id=%q}))`, tenant), time.Now())
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for _, s := range v {
		sec := float64(s.Value)
		out[string(s.Metric["instance"])] = time.Unix(0, int64(sec*1e9))
	}
	return out, nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// thanosHosts are TestFleetThanos's host names (UTS namespaces of their own).
var thanosHosts = []string{"gpu-thanos-a", "gpu-thanos-b", "gpu-thanos-c"}

// thanosTenant is the tenant the collectors write as (THANOS-TENANT header,
// Thanos receive's default tenant header); receive stores it as tenant_id.
const thanosTenant = "gpu-east"

// thanosLimits are the tenant's per-request limits (receive's limits
// file): a request over any of them is refused with 413, which no
// remote-write client retries. size_bytes_limit applies to the body and to
// it decompressed.
const thanosLimits = `write:
  tenants:
    ` + thanosTenant + `:
      request:
        size_bytes_limit: 10000
        series_limit: 100
        samples_limit: 500
`

// thanosOverride adds to config/prometheus-remote-write.yaml the tenant
// header, requests within the tenant's limits, and a second remote_write
// into a plain Prometheus that is never stopped: it gets the very samples
// and so is the reference of what the hashring must hold.
const thanosOverride = `exporters:
  remote_write:
    max_batch_size_bytes: 8000
    headers:
      THANOS-TENANT: ` + thanosTenant + `
  remote_write/reference:
    endpoint: %s
service:
  pipelines:
    metrics:
      exporters: [remote_write, remote_write/reference]
`

// TestFleetThanos: three hosts with real host names push with the shipped
// remote-write config, and the header THANOS-TENANT, into a horizontally
// scaled backend: three Thanos receivers in one hashring with replication
// factor 2 and per-request limits for the tenant, read through Thanos
// query. No request is refused. Every series of each host's own
// endpoint is readable through the querier with its values, under the
// host's instance and the tenant's tenant_id; each series is stored on two
// receivers. Then a receiver that holds replicas is killed (SIGKILL) mid-run:
// the collectors write on through the other two, no sample of any host is
// missing through the querier across the kill window (against the
// reference Prometheus, which got the same samples), and every dashboard
// query returns every host.
func TestFleetThanos(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the hosts' names are set with unshare --uts")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	harness.CollectorBinary(t)
	thanos := harness.ThanosBinary(t)
	board, _, _ := loadBoardAndRules(t)

	rs := harness.StartThanosReceivers(t, thanos, harness.ThanosReceiveOptions{
		Receivers: 3, ReplicationFactor: 2, LimitsFile: harness.WriteFile(t, "limits.yaml", thanosLimits),
	})
	q := harness.StartThanosQuery(ctx, t, thanos, []string{rs[0].StoreAddr(), rs[1].StoreAddr(), rs[2].StoreAddr()})
	ref := harness.StartRemoteWritePrometheus(t, "", "1d")
	override := harness.WriteFile(t, "fleet.yaml", fleetOverride)
	tenant := harness.WriteFile(t, "thanos.yaml", fmt.Sprintf(thanosOverride, ref.WriteURL()))

	// The collectors write into receivers r0 and r1 (a collector has one
	// endpoint: one receiver or a balancer in front of several); r2 only
	// holds the replicas the hashring sends it, and is the one killed.
	var hosts []*fleetHost
	for i, name := range thanosHosts {
		h := startFleetHost(ctx, t, name, int64(31+i), rs[i%2].WriteURL(), override, tenant)
		hosts = append(hosts, h)
	}
	instance := func(h *fleetHost) string { return h.name }

	checkThanosSeries(ctx, t, q, hosts, "before the kill")

	// Replication: each series is on two receivers, and r2 holds a share.
	perReplica, err := q.API(ctx, "/api/v1/query", url.Values{
		"query": {fmt.Sprintf(`count by (%s) ({__name__=~"ernic_.+", tenant_id=%q})`, harness.ThanosReplicaLabel, thanosTenant)},
		"dedup": {"false"},
	})
	if err != nil {
		t.Fatal(err)
	}
	distinct, err := q.ScalarAt(ctx, fmt.Sprintf(`count({__name__=~"ernic_.+", tenant_id=%q})`, thanosTenant), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	replicas := replicaCounts(t, perReplica)
	total := 0.0
	for _, n := range replicas {
		total += n
	}
	t.Logf("series per receiver (dedup=false): %v; distinct series %v", replicas, distinct)
	if replicas[rs[2].Name] == 0 || total != 2*distinct {
		t.Fatalf("series per receiver %v, %v in all, want every receiver a share and twice the %v distinct series (replication factor 2)", replicas, total, distinct)
	}

	// A receiver killed mid-run: every sample in the window from 8 s
	// before to 15 s after it must be readable through the querier.
	const before, after = 8 * time.Second, 15 * time.Second
	time.Sleep(before)
	killedAt := time.Now()
	if err := rs[2].Proc.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %s (SIGKILL) at %s", rs[2].Name, killedAt.UTC().Format(time.RFC3339Nano))
	time.Sleep(after)
	windowEnd := killedAt.Add(after)
	window := before + after
	for _, h := range hosts {
		sel := fmt.Sprintf(`{__name__=~"ernic_.+", instance=%q}`, h.name)
		var want map[string]float64
		var lost []string
		eventually(t, 30*time.Second, h.name+": every sample of the kill window through the querier", func() []string {
			refM, err := ref.RawSamples(ctx, sel, window, windowEnd)
			if err != nil {
				return []string{err.Error()}
			}
			got, err := harness.ThanosRaw(ctx, q, sel, window, windowEnd, true)
			if err != nil {
				return []string{err.Error()}
			}
			want = harness.Samples(refM)
			lost, _ = harness.Missing(want, harness.Samples(got, "tenant_id"))
			if len(lost) > 0 {
				slices.Sort(lost)
				return []string{fmt.Sprintf("%d of %d samples missing, e.g. %v", len(lost), len(want), lost[:min(5, len(lost))])}
			}
			return nil
		})
		scrapes := 0
		for k := range want {
			if harness.FamilyOf(k) == "ernic_instances" {
				scrapes++
			}
		}
		// The reference must have seen the collector scrape through the
		// whole window (1 s collections), or the comparison proves little.
		if scrapes < int(window/time.Second)*3/4 {
			t.Errorf("%s: the reference holds %d scrapes in the %v window, want about %d", h.name, scrapes, window, int(window/time.Second))
		}
		t.Logf("%s: %d samples (%d scrapes) in the %v around the kill, %d lost through the querier", h.name, len(want), scrapes, window, len(lost))
	}
	// A request the receivers refused for its content (4xx) is dropped by
	// the collector; one that failed as the receiver died (5xx) is retried.
	for _, r := range rs[:2] {
		if !r.Proc.Running() {
			t.Fatalf("%s exited:\n%s", r.Name, r.Log.String())
		}
		w, err := harness.ReadReceiverWrites(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s answered remote-write requests %v (series, samples per request %.1f, %.1f); forwards to the other receivers %v",
			r.Name, w.Codes, w.Series, w.Samples, w.Forwards)
		for code := range w.Codes {
			if strings.HasPrefix(code, "4") {
				t.Errorf("%s refused requests: %v", r.Name, w.Codes)
			}
		}
	}
	for _, h := range hosts {
		t.Logf("%s: %d lines of the collector's log on a failed request", h.name, strings.Count(h.rw.Log.String(), "failed; the batch waits"))
	}

	checkThanosSeries(ctx, t, q, hosts, "after the kill")
	eventually(t, waitTimeout, "4 samples of every host within 6s through the querier", func() []string {
		v, err := q.Vector(ctx, `count_over_time(ernic_instances[6s]) >= 4`, time.Now())
		if err != nil || len(v) != len(hosts) {
			return []string{fmt.Sprintf("%d hosts (%v)", len(v), err)}
		}
		return nil
	})
	checkFleetDashboard(ctx, t, board, fleetBackend{"Thanos query, a receiver killed", q, instance, false}, hosts)

	for _, h := range hosts {
		if l := h.rw.Log.String(); strings.Contains(l, "rejected") || strings.Contains(l, "Dropping data") {
			t.Errorf("remote-write collector of %s logged a rejection:\n%s", h.name, l)
		}
	}
}

// checkThanosSeries checks that, per host, the querier holds every series
// of the host's own endpoint with its values, under the host's instance,
// the job ernic and the tenant's tenant_id, deduplicated, and nothing else.
func checkThanosSeries(ctx context.Context, t *testing.T, q *harness.Prometheus, hosts []*fleetHost, when string) {
	t.Helper()
	for _, h := range hosts {
		endpoint := fmt.Sprintf("http://127.0.0.1:%d/metrics", h.pullPort)
		n := 0
		eventually(t, 2*waitTimeout, fmt.Sprintf("%s: the series of %s through the querier", when, h.name), func() []string {
			want, err := endpointSeries(ctx, endpoint)
			if err != nil {
				return []string{err.Error()}
			}
			v, err := q.Vector(ctx, fmt.Sprintf(`{__name__=~"ernic_.+", instance=%q}`, h.name), time.Now())
			if err != nil {
				return []string{err.Error()}
			}
			got, problems := tenantSeries(v, thanosTenant)
			problems = append(problems, compareHostSeries(want, got)...)
			for _, s := range v {
				if s.Metric["job"] != "ernic" {
					problems = append(problems, "job not ernic: "+s.Metric.String())
				}
			}
			n = len(got)
			return problems
		})
		t.Logf("%s: %s: %d series through the querier, tenant_id=%q", when, h.name, n, thanosTenant)
	}
}

// replicaCounts reads a count by (receive_replica) answer.
func replicaCounts(t *testing.T, r *harness.APIResponse) map[string]float64 {
	t.Helper()
	var v model.Vector
	if err := json.Unmarshal(r.Data.Result, &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range v {
		out[string(s.Metric[harness.ThanosReplicaLabel])] = float64(s.Value)
	}
	return out
}

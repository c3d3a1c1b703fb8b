// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// StartThanosQuery starts `thanos query` on the store APIs stores (their
// gRPC addresses), deduplicating along ThanosReplicaLabel, with args added
// to its flags, and waits until it is ready and lists every store as
// healthy. It answers the Prometheus query API.
func StartThanosQuery(ctx context.Context, t testing.TB, bin string, stores []string, args ...string) *Prometheus {
	t.Helper()
	httpPort := FreePort(t)
	flags := []string{"query",
		"--http-address=" + LoopbackAddr(httpPort),
		"--grpc-address=" + LoopbackAddr(FreePort(t)),
		"--query.replica-label=" + ThanosReplicaLabel,
	}
	for _, s := range stores {
		flags = append(flags, "--endpoint="+s)
	}
	proc := Start(t, Launch{Name: "thanos query", Path: bin, Args: append(flags, args...), StopWait: 15 * time.Second})
	q := QueryAPIAt(httpPort)
	WaitReady(t, proc, q.URL("/-/ready"), 60*time.Second)
	Eventually(t, 30*time.Second, "thanos query lists every store", func() []string {
		var answer map[string][]struct {
			Name      string `json:"name"`
			LastError any    `json:"lastError"`
		}
		if err := q.GetAPI(ctx, "/api/v1/stores", &answer); err != nil {
			return []string{err.Error()}
		}
		healthy := map[string]bool{}
		for _, ss := range answer {
			for _, s := range ss {
				healthy[s.Name] = s.LastError == nil
			}
		}
		var missing []string
		for _, s := range stores {
			if !healthy[s] {
				missing = append(missing, "not a healthy store yet: "+s)
			}
		}
		return missing
	})
	return q
}

// StartThanosRule starts `thanos rule` evaluating the rule files every
// interval through the query API at queryURL (a querier), with args added
// to its flags, and waits until it is ready. Its /api/v1/alerts and
// /api/v1/rules answer as a Prometheus's do; it sends to no Alertmanager.
func StartThanosRule(t testing.TB, bin, queryURL string, interval time.Duration, ruleFiles []string, args ...string) *Prometheus {
	t.Helper()
	httpPort := FreePort(t)
	flags := []string{"rule",
		"--data-dir=" + filepath.Join(t.TempDir(), "rule"),
		"--http-address=" + LoopbackAddr(httpPort),
		"--grpc-address=" + LoopbackAddr(FreePort(t)),
		"--query=" + queryURL,
		"--eval-interval=" + model.Duration(interval).String(),
		`--label=ruler="fleet-test"`,
	}
	for _, f := range ruleFiles {
		flags = append(flags, "--rule-file="+f)
	}
	proc := Start(t, Launch{Name: "thanos rule", Path: bin, Args: append(flags, args...), StopWait: 15 * time.Second})
	r := QueryAPIAt(httpPort)
	WaitReady(t, proc, r.URL("/-/ready"), 60*time.Second)
	return r
}

// ThanosRaw returns the raw samples of selector in (at-window, at] through
// a querier, deduplicated or not.
func ThanosRaw(ctx context.Context, q *Prometheus, selector string, window time.Duration, at time.Time, dedup bool) (model.Matrix, error) {
	r, err := q.API(ctx, "/api/v1/query", url.Values{
		"query": {fmt.Sprintf("%s[%dms]", selector, window.Milliseconds())},
		"time":  {PromTime(at)}, "dedup": {fmt.Sprint(dedup)},
	})
	if err != nil {
		return nil, err
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: result type %q", selector, r.Data.ResultType)
	}
	var m model.Matrix
	err = json.Unmarshal(r.Data.Result, &m)
	return m, err
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// backendProxy stands between the collector and a real Prometheus, as a
// load balancer does: it passes requests on, answers 503 while the backend
// is "down", or passes them on each after a delay, a backend that takes
// the data slower than a host makes it. The Prometheus itself keeps
// running, and evaluating rules, throughout.
type backendProxy struct {
	down  atomic.Bool
	delay atomic.Int64 // time.Duration
	rp    *httputil.ReverseProxy
	// served counts the requests passed on; refused those answered 503.
	served, refused atomic.Int64
}

// newBackendProxy serves a proxy to target (a Prometheus's base URL) and
// returns it with the remote-write URL to give the collector.
func newBackendProxy(t *testing.T, target string) (*backendProxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &backendProxy{rp: httputil.NewSingleHostReverseProxy(u)}
	return p, harness.ServeHTTP(t, p) + "/api/v1/write"
}

func (p *backendProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.down.Load() {
		p.refused.Add(1)
		http.Error(w, "backend down", http.StatusServiceUnavailable)
		return
	}
	if d := time.Duration(p.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	p.served.Add(1)
	p.rp.ServeHTTP(w, r)
}

// setDown makes the backend answer 503 (true) or pass requests on again.
func (p *backendProxy) setDown(down bool) { p.down.Store(down) }

// setDelay delays each request passed on by d (0: none).
func (p *backendProxy) setDelay(d time.Duration) { p.delay.Store(int64(d)) }

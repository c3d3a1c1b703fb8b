// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// RemoteWriteProxy stands between one host and its remote-write endpoint:
// it forwards each request as it is, or with every sample's timestamp
// shifted (what a host whose clock is off sends), or answers 429 with a
// Retry-After of the test's choosing; it records every request.
type RemoteWriteProxy struct {
	// URL is where the host writes.
	URL string

	target string
	client *http.Client

	mu         sync.Mutex
	throttle   bool
	retryAfter string
	shift      time.Duration
	requests   []ProxiedRequest
}

// ProxiedRequest is one request the proxy answered.
type ProxiedRequest struct {
	At         time.Time // when it came
	Code       int
	RetryAfter string // the header it answered with, on a 429
}

// StartRemoteWriteProxy serves a proxy to the remote-write URL target on a
// free loopback port until the test ends; it forwards unchanged.
func StartRemoteWriteProxy(t testing.TB, target string) *RemoteWriteProxy {
	t.Helper()
	p := &RemoteWriteProxy{target: target, client: &http.Client{Timeout: 30 * time.Second}}
	p.URL = ServeHTTP(t, p) + "/api/v1/receive"
	return p
}

// Throttle makes the proxy answer every request 429 with the header
// Retry-After: retryAfter (none when ""), until Forward.
func (p *RemoteWriteProxy) Throttle(retryAfter string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.throttle, p.retryAfter = true, retryAfter
}

// Forward makes the proxy forward every request again.
func (p *RemoteWriteProxy) Forward() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.throttle = false
}

// Shift adds d to the timestamp of every sample forwarded from now on
// (remote write 1.0 requests).
func (p *RemoteWriteProxy) Shift(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shift = d
}

// Requests returns every request answered so far, in the order they came.
func (p *RemoteWriteProxy) Requests() []ProxiedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.requests)
	slices.SortStableFunc(out, func(a, b ProxiedRequest) int { return a.At.Compare(b.At) })
	return out
}

func (p *RemoteWriteProxy) record(at time.Time, code int, retryAfter string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, ProxiedRequest{At: at, Code: code, RetryAfter: retryAfter})
}

// ServeHTTP answers or forwards one request.
func (p *RemoteWriteProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	p.mu.Lock()
	throttle, retryAfter, shift := p.throttle, p.retryAfter, p.shift
	p.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		p.record(at, http.StatusBadRequest, "")
		return
	}
	if throttle {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, "throttled by the test's proxy", http.StatusTooManyRequests)
		p.record(at, http.StatusTooManyRequests, retryAfter)
		return
	}
	if shift != 0 {
		if body, err = shiftTimestamps(body, shift); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			p.record(at, http.StatusBadRequest, "")
			return
		}
	}
	code := p.forward(w, r, body)
	p.record(at, code, "")
}

// forward sends body to the target with r's headers and copies the answer
// to w; a target that cannot be reached is a 502.
func (p *RemoteWriteProxy) forward(w http.ResponseWriter, r *http.Request, body []byte) int {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return http.StatusInternalServerError
	}
	for k, vs := range r.Header {
		if k != "Content-Length" {
			req.Header[k] = vs
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return http.StatusBadGateway
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	return resp.StatusCode
}

// shiftTimestamps adds d to every sample of a snappy-compressed remote
// write 1.0 request.
func shiftTimestamps(body []byte, d time.Duration) ([]byte, error) {
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	var wr prompb.WriteRequest
	if err := wr.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("not a remote write 1.0 request: %w", err)
	}
	for i := range wr.Timeseries {
		for j := range wr.Timeseries[i].Samples {
			wr.Timeseries[i].Samples[j].Timestamp += d.Milliseconds()
		}
	}
	out, err := wr.Marshal()
	if err != nil {
		return nil, err
	}
	return snappy.Encode(nil, out), nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// ThanosBinary returns the Thanos binary (receive and query):
// $THANOS_BIN, else bin/thanos, which `make thanos` builds from the Go
// module proxy (`make e2e-test` does, once). It fails the test without one.
func ThanosBinary(t testing.TB) string {
	t.Helper()
	return madeBinary(t, "THANOS_BIN", "thanos", "Thanos")
}

// QueryAPIAt is the Prometheus HTTP query API that another program of the
// test serves on the loopback port (Thanos query answers the same
// /api/v1/query and /api/v1/query_range). Only its query methods (API,
// GetAPI, Query, Vector, RawSamples, QueryRange, ScalarAt, URL) apply: it
// has no process to start, stop or signal.
func QueryAPIAt(port int) *Prometheus {
	return &Prometheus{Port: port}
}

// WaitReady polls url until it answers 200, failing the test when proc
// exits first or after d, with proc's log.
func WaitReady(t testing.TB, proc *Process, url string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if !proc.Running() {
			t.Fatalf("%s exited before it was ready:\n%s", proc.name, proc.Log.String())
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within %v (%s, last: %v):\n%s", proc.name, d, url, err, proc.Log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// LoopbackAddr is 127.0.0.1:port.
func LoopbackAddr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

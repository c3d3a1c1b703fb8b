// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"fmt"
	"testing"
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

// LoopbackAddr is 127.0.0.1:port.
func LoopbackAddr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

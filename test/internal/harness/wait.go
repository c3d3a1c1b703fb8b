// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// Eventually calls check until it returns no problem, or fails the test
// with the last problems (the first 40) after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() []string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		problems := check()
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(problems)
			if len(problems) > 40 {
				problems = append(problems[:40], fmt.Sprintf("... and %d more", len(problems)-40))
			}
			t.Fatalf("%s: not within %v:\n  %s", what, timeout, strings.Join(problems, "\n  "))
		}
		time.Sleep(250 * time.Millisecond)
	}
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

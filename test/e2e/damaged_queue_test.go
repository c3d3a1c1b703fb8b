// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// damagedBytes is the size of the garbage a damaged queue file holds:
// what a failing disk leaves.
const damagedBytes = 100_000

// damageQueue writes garbage where exporter's queue file goes under the
// state directory, before the collector starts: the file queue_storage
// must set aside.
func damageQueue(t *testing.T, stateDir, exporter string) string {
	t.Helper()
	dir := filepath.Join(stateDir, "queue")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, damagedBytes)
	_, _ = rand.Read(b)
	path := filepath.Join(dir, "exporter_"+exporter+"__metrics")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkSetAside checks that the damaged file at path was renamed aside
// whole and that the collector said so once, at error, naming it.
func checkSetAside(t *testing.T, path, log string) {
	t.Helper()
	aside, _ := filepath.Glob(path + ".*.damaged")
	if len(aside) != 1 {
		t.Errorf("want one set-aside copy of %s, found %v", path, aside)
	} else if fi, err := os.Stat(aside[0]); err != nil || fi.Size() != damagedBytes {
		t.Errorf("set-aside %s: %v, want %d bytes", aside[0], err, damagedBytes)
	}
	var lines []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "a queue file cannot be read; set aside") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "error") || !strings.Contains(lines[0], path) || !strings.Contains(lines[0], fmt.Sprint(damagedBytes)) {
		t.Errorf("want one error line naming %s and its %d bytes, got %q", path, damagedBytes, lines)
	}
}

// TestDamagedQueueFilesStayWithinBound: twenty collectors in a row start
// on a damaged queue file (config/otlphttp.yaml, an endpoint that is not
// there). Each starts and sets the file aside, and the state directory
// keeps at most set_aside::max_files of them.
func TestDamagedQueueFilesStayWithinBound(t *testing.T) {
	t.Parallel()
	state, runDir := t.TempDir(), t.TempDir()
	config := filepath.Join(harness.RepoRoot(t), "config", "otlphttp.yaml")
	env := []string{"ERNIC_RUN_DIR=" + runDir, "ERNIC_OTLP_ENDPOINT=http://127.0.0.1:1", "ERNIC_STATE_DIR=" + state}
	for i := range 20 {
		damageQueue(t, state, "otlp_http_durable")
		log := &harness.LockedBuffer{}
		c := runCollectorLog(t, env, log, config)
		eventually(t, 30*time.Second, fmt.Sprintf("round %d: the damaged file set aside", i), func() []string {
			if !strings.Contains(log.String(), "Everything is ready") {
				return []string{"the collector has not started yet"}
			}
			return nil
		})
		if !strings.Contains(log.String(), "set aside") {
			t.Fatalf("round %d: no set-aside line:\n%s", i, log.String())
		}
		if err := c.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	aside, _ := filepath.Glob(filepath.Join(state, "queue", "*.damaged"))
	if len(aside) != 3 {
		t.Errorf("%d damaged files kept, want set_aside::max_files 3: %v", len(aside), aside)
	}
	t.Logf("after 20 damaged starts the queue directory holds %d bytes (%d set aside)", dirBytes(t, filepath.Join(state, "queue")), len(aside))
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	// The zstd decompressor that config/otlp.yaml's compression needs
	// (configgrpc registers it with gRPC).
	_ "go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// grpcEndpoint is an OTLP/gRPC metrics server of the test: Unavailable
// while down, else it records the newest ernic.instances point of each
// request.
type grpcEndpoint struct {
	pmetricotlp.UnimplementedGRPCServer
	mu       sync.Mutex
	down     bool
	accepted []time.Time
}

func (e *grpcEndpoint) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down {
		return pmetricotlp.NewExportResponse(), status.Error(codes.Unavailable, "test says down")
	}
	e.accepted = append(e.accepted, newestInstancesPoint(req))
	return pmetricotlp.NewExportResponse(), nil
}

func (e *grpcEndpoint) setDown(down bool) {
	e.mu.Lock()
	e.down = down
	e.mu.Unlock()
}

// between returns the accepted point times in (from, to).
func (e *grpcEndpoint) between(from, to time.Time) []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []time.Time
	for _, at := range e.accepted {
		if at.After(from) && at.Before(to) {
			out = append(out, at)
		}
	}
	return out
}

// TestOTLPGRPCKilledDuringOutage: config/otlp.yaml (otlp_durable, the
// persistent queue) starts on a damaged queue file, which is set aside,
// and sends to an OTLP/gRPC server that goes down; the collector is killed
// (SIGKILL) during the outage and started again on the same state
// directory. The scrapes queued before the kill reach the server once it
// is back, sent by the second process: the fresh queue is on disk.
func TestOTLPGRPCKilledDuringOutage(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &grpcEndpoint{}
	srv := grpc.NewServer()
	pmetricotlp.RegisterGRPCServer(srv, e)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	runDir, state := t.TempDir(), t.TempDir()
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 43})
	override := fastQueueOverride(t, "otlp_durable", 200*time.Millisecond, "    tls:\n      insecure: true\n")
	env := []string{"ERNIC_RUN_DIR=" + runDir, "ERNIC_OTLP_ENDPOINT=" + ln.Addr().String(), "ERNIC_STATE_DIR=" + state}
	config := filepath.Join(harness.RepoRoot(t), "config", "otlp.yaml")
	damaged := damageQueue(t, state, "otlp_durable")
	log := &harness.LockedBuffer{}
	started := time.Now()
	first := runCollectorLog(t, env, log, config, override)
	eventually(t, waitTimeout, "first delivery", func() []string {
		if len(e.between(time.Time{}, time.Now().Add(time.Hour))) == 0 {
			return []string{"nothing accepted yet"}
		}
		return nil
	})
	t.Logf("first batch delivered %v after the start on a damaged queue file", time.Since(started).Round(10*time.Millisecond))
	checkSetAside(t, damaged, log.String())

	e.setDown(true)
	down := time.Now()
	time.Sleep(5 * time.Second)
	killed := time.Now()
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	runCollector(t, env, config, override)
	time.Sleep(2 * time.Second)
	e.setDown(false)
	up := time.Now()

	// Four or five scrapes were queued between down and the kill.
	eventually(t, 30*time.Second, "the scrapes queued before the kill", func() []string {
		if n := len(e.between(down, killed)); n < 3 {
			return []string{"only " + strconv.Itoa(n) + " of the scrapes before the kill arrived"}
		}
		if len(e.between(up, time.Now().Add(time.Hour))) == 0 {
			return []string{"no scrape after the server came back"}
		}
		return nil
	})
	t.Logf("scrapes from the 5 s before the kill delivered: %d", len(e.between(down, killed)))
}

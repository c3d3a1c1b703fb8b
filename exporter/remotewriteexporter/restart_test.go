// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/storagetest"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/metadata"
)

// The shipped settings (num_consumers 1, block_on_overflow, a persistent
// queue) across a restart during an outage: every batch once, in order.
func TestRestartDuringOutageDeliversInOrder(t *testing.T) {
	ep, up := downEndpoint(t)
	sid := component.MustNewID("memstorage")
	host := storagetest.NewMemStorage().Host(sid)
	run := func() *remoteWrite {
		cfg := testConfig(ep.srv.URL)
		cfg.QueueConfig.Get().StorageID = &sid
		e, err := newExporter(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
		require.NoError(t, err)
		require.NoError(t, e.Start(context.Background(), host))
		return e
	}
	e := run()
	for i := range 10 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, e.Shutdown(context.Background()))
	up.Store(true)
	e = run()
	for i := 10; i < 15; i++ {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
	}
	waitFor(t, "15 batches", func() bool { return len(ep.batches()) >= 15 })
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, e.Shutdown(context.Background()))
	require.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14"}, ep.batches())
}

// When the storage cannot be opened, the in-memory fallback delivers.
func TestDamagedStorageFallsBackToMemory(t *testing.T) {
	ep := newEndpoint(t, func(int) int { return http.StatusOK })
	cfg := testConfig(ep.srv.URL)
	sid := component.MustNewID("missing")
	cfg.QueueConfig.Get().StorageID = &sid
	e, logs := start(t, cfg)
	require.Equal(t, 1, logs.FilterMessageSnippet("cannot be opened").Len())
	for i := range 3 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 1)))
	}
	waitFor(t, "3", func() bool { return len(ep.batches()) == 3 })
}

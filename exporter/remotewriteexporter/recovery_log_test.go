// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/storagetest"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/metadata"
)

// With the queue on disk, as the shipped configuration has it, an outage's
// recovery is logged as with one in memory: "delivers again" when the
// endpoint answers, "backlog delivered" once the queue is empty. The
// queue's record still counts the batch just sent when the sender settles
// it: the record alone never reached 0.
func TestRecoveryLoggedWithPersistentQueue(t *testing.T) {
	ep := newEndpoint(t, func(n int) int {
		if n < 5 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	core, logs := observer.New(zap.InfoLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	cfg := testConfig(ep.srv.URL)
	sid := component.MustNewID("memstorage")
	cfg.QueueConfig.Get().StorageID = &sid
	e, err := newExporter(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), storagetest.NewMemStorage().Host(sid)))
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	for i := range 3 {
		require.NoError(t, e.ConsumeMetrics(context.Background(), batch(i, 2)))
	}
	waitFor(t, "3 batches", func() bool { return len(ep.batches()) == 6 })
	assert.Len(t, logs.FilterMessageSnippet("delivers again").All(), 1)
	waitFor(t, "the drained backlog's line", func() bool {
		return logs.FilterMessageSnippet("backlog delivered").Len() == 1
	})
}

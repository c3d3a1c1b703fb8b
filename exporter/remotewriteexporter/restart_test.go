// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/metadata"
)

// memStorage is a storage extension whose data outlives the exporters
// using it: a restart is a new exporter on the same memStorage.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

func (s *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{s}, nil
}

type memClient struct{ s *memStorage }

func (c memClient) Get(_ context.Context, k string) ([]byte, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.data[k], nil
}
func (c memClient) Set(_ context.Context, k string, v []byte) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.data[k] = append([]byte(nil), v...)
	return nil
}
func (c memClient) Delete(_ context.Context, k string) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.data, k)
	return nil
}
func (c memClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value, _ = c.Get(ctx, op.Key)
		case storage.Set:
			_ = c.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			_ = c.Delete(ctx, op.Key)
		}
	}
	return nil
}
func (memClient) Close(context.Context) error { return nil }

type storageHost struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// The shipped settings (num_consumers 1, block_on_overflow, a persistent
// queue) across a restart during an outage: every batch once, in order.
func TestRestartDuringOutageDeliversInOrder(t *testing.T) {
	var up atomic.Bool
	var mu sync.Mutex
	var got []string
	ep := newEndpoint(t, func(int) int {
		if !up.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	_ = ep
	st := &memStorage{data: map[string][]byte{}}
	sid := component.MustNewID("memstorage")
	host := storageHost{componenttest.NewNopHost(), map[component.ID]component.Component{sid: st}}
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
	mu.Lock()
	_ = got
	mu.Unlock()
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

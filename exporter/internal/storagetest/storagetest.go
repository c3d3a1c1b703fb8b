// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package storagetest is a storage extension for tests whose data outlives
// its exporters: a restart is a new exporter on the same MemStorage.
package storagetest // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/storagetest"

import (
	"context"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// MemStorage keeps every client's keys in one map in memory.
type MemStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

// NewMemStorage returns an empty MemStorage.
func NewMemStorage() *MemStorage { return &MemStorage{data: map[string][]byte{}} }

// GetClient returns a client of s (every client sees the same keys).
func (s *MemStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{s}, nil
}

// Host returns a host whose only extension is s, as id.
func (s *MemStorage) Host(id component.ID) component.Host {
	return host{componenttest.NewNopHost(), map[component.ID]component.Component{id: s}}
}

// Keys returns the keys s holds, sorted: a persistent queue's items (by
// index) and its metadata key.
func (s *MemStorage) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.data))
	for k := range s.data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type memClient struct{ s *MemStorage }

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

type host struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package queuestorageextension // import "github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// queueStorage is file_storage behind a check of its directory at start.
type queueStorage struct {
	cfg    *Config
	logger *zap.Logger
	inner  storage.Extension
}

var _ storage.Extension = (*queueStorage)(nil)

func newQueueStorage(logger *zap.Logger, cfg *Config, inner extension.Extension) (*queueStorage, error) {
	s, ok := inner.(storage.Extension)
	if !ok {
		return nil, errors.New("queue_storage: file_storage is not a storage extension")
	}
	return &queueStorage{cfg: cfg, logger: logger, inner: s}, nil
}

// Start sets the damaged files aside before any exporter opens its queue
// (the collector starts extensions first), then starts file_storage.
func (q *queueStorage) Start(ctx context.Context, host component.Host) error {
	dir := setAsideDir{path: q.cfg.Directory, bound: q.cfg.SetAside, logger: q.logger}
	dir.setAsideDamaged()
	dir.prune()
	return q.inner.Start(ctx, host)
}

// Shutdown stops file_storage.
func (q *queueStorage) Shutdown(ctx context.Context) error {
	return q.inner.Shutdown(ctx)
}

// GetClient opens a client's file through file_storage. Its recreate may
// have renamed a file to *.backup meanwhile: the bound applies to that too.
func (q *queueStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := q.inner.GetClient(ctx, kind, id, name)
	dir := setAsideDir{path: q.cfg.Directory, bound: q.cfg.SetAside, logger: q.logger}
	dir.prune()
	return c, err
}

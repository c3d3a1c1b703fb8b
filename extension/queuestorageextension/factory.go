// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package queuestorageextension // import "github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"

import (
	"context"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension/internal/metadata"
)

// Defaults of set_aside: a few files to look at, at most one full shipped queue.
const (
	defaultMaxFiles = 3
	defaultMaxBytes = 256 << 20
)

// NewFactory returns the factory of the queue_storage extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, createExtension, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	fs := filestorage.NewFactory().CreateDefaultConfig().(*filestorage.Config)
	return &Config{
		Config:   *fs,
		SetAside: SetAsideConfig{MaxFiles: defaultMaxFiles, MaxBytes: defaultMaxBytes},
	}
}

func createExtension(ctx context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	c := cfg.(*Config)
	// The factory takes only IDs of its own type.
	fsf := filestorage.NewFactory()
	innerSet := set
	innerSet.ID = component.NewIDWithName(fsf.Type(), set.ID.Name())
	inner, err := fsf.Create(ctx, innerSet, &c.Config)
	if err != nil {
		return nil, err
	}
	return newQueueStorage(set.Logger, c, inner)
}

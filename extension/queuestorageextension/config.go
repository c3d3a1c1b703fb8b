// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package queuestorageextension // import "github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"

import (
	"errors"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
)

// Config is file_storage's configuration plus set_aside.
type Config struct {
	filestorage.Config `mapstructure:",squash"`

	// SetAside bounds the damaged queue files kept for inspection.
	SetAside SetAsideConfig `mapstructure:"set_aside"`
}

// SetAsideConfig bounds the files set aside.
type SetAsideConfig struct {
	// MaxFiles is how many are kept at most (0: none is kept).
	MaxFiles int `mapstructure:"max_files"`
	// MaxBytes is how many bytes they may take together (0: no bound in bytes).
	MaxBytes int64 `mapstructure:"max_bytes"`
}

// Validate checks file_storage's settings and the bound.
func (c *Config) Validate() error {
	if c.SetAside.MaxFiles < 0 {
		return errors.New("set_aside::max_files must not be negative")
	}
	if c.SetAside.MaxBytes < 0 {
		return errors.New("set_aside::max_bytes must not be negative")
	}
	return c.Config.Validate()
}

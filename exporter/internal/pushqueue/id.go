// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"sync/atomic"
	"time"
)

var lastID atomic.Uint64

// NewID returns an ID above every earlier one, an earlier process's too
// (wall clock): it orders batches after a restart and dates them.
func NewID() uint64 {
	for {
		last := lastID.Load()
		id := max(uint64(time.Now().UnixNano()), last+1)
		if lastID.CompareAndSwap(last, id) {
			return id
		}
	}
}

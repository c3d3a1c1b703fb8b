// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"errors"
	"sync/atomic"
	"time"
)

// retryAfterError carries Retry-After or gRPC's RetryInfo.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string             { return e.err.Error() }
func (e *retryAfterError) Unwrap() error             { return e.err }
func (e *retryAfterError) RetryAfter() time.Duration { return e.after }

// NewRetryAfter returns err, retried no sooner than after.
func NewRetryAfter(err error, after time.Duration) error {
	return &retryAfterError{err: err, after: after}
}

// RetryAfter is how long err's chain asks a retry to wait (0: no wish).
func RetryAfter(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return ra.RetryAfter()
	}
	return 0
}

var lastID atomic.Uint64

// NewID returns an ID above every earlier one, an earlier process's too (wall clock).
func NewID() uint64 {
	for {
		last := lastID.Load()
		id := max(uint64(time.Now().UnixNano()), last+1)
		if lastID.CompareAndSwap(last, id) {
			return id
		}
	}
}

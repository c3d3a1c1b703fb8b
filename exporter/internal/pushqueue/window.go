// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"
	"sync"
	"time"
)

// Window joins the batches that come within d of the first into one queue
// item (merge_window): one write a scrape rather than one per instance.
type Window[P any] struct {
	d     time.Duration
	flush func(context.Context, P) error

	// mu is held across add and flush so that values enter the queue in order.
	mu      sync.Mutex
	pending P
	has     bool
	timer   *time.Timer
	gen     uint64 // values opened, so that a flushed one's timer does nothing
}

// NewWindow returns a window of d; flush reports its own errors (a timer calls it).
func NewWindow[P any](d time.Duration, flush func(context.Context, P) error) *Window[P] {
	return &Window[P]{d: d, flush: flush}
}

// Add adds a batch, flushing before when it does not fit and after when the
// value is full. An error from add abandons the value.
func (w *Window[P]) Add(ctx context.Context, open func() (P, error), fits func(P) bool, add func(P) (full bool, err error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.has && fits != nil && !fits(w.pending) {
		_ = w.flushLocked(ctx) // flush reported it; the batch goes on alone
	}
	if !w.has {
		p, err := open()
		if err != nil {
			return err
		}
		w.pending, w.has = p, true
		w.gen++
		gen := w.gen
		w.timer = time.AfterFunc(w.d, func() { w.expire(gen) })
	}
	full, err := add(w.pending)
	if err != nil {
		w.timer.Stop()
		var zero P
		w.pending, w.has = zero, false
		return err
	}
	if full {
		return w.flushLocked(ctx)
	}
	return nil
}

// Flush puts the pending value, if any, in the queue (at shutdown).
func (w *Window[P]) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked(ctx)
}

func (w *Window[P]) flushLocked(ctx context.Context) error {
	if !w.has {
		return nil
	}
	w.timer.Stop()
	p := w.pending
	var zero P
	w.pending, w.has = zero, false
	return w.flush(ctx, p)
}

// expire flushes value gen unless it was flushed already.
func (w *Window[P]) expire(gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen == w.gen {
		_ = w.flushLocked(context.Background())
	}
}

// Pending calls fn on the pending value, if any, under the lock.
func (w *Window[P]) Pending(fn func(P)) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.has {
		fn(w.pending)
	}
	return w.has
}

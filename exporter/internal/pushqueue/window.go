// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"
	"sync"
	"time"
)

// Window joins the batches that come within d of the first into one
// pending value P, which goes to flush when d has passed, when a batch
// fills it, or at Flush.
//
// Why: the ernic receiver hands on a batch per instance. One queue item a
// scrape, rather than one per instance, is fewer writes of the persistent
// queue and fewer, larger requests, without a batch processor holding the
// scrape as pdata until its timeout (docs/performance-memory.md).
type Window[P any] struct {
	d     time.Duration
	flush func(context.Context, P) error

	// mu guards the fields below. It is held while a batch is added and
	// while a value is flushed, so that values enter the queue in order.
	mu      sync.Mutex
	pending P
	has     bool
	timer   *time.Timer
	gen     uint64 // values opened, so that a flushed one's timer does nothing
}

// NewWindow returns a window of d. flush puts a value in the queue and
// reports what the queue refused (it is called with no caller to return
// its error to when the window ends).
func NewWindow[P any](d time.Duration, flush func(context.Context, P) error) *Window[P] {
	return &Window[P]{d: d, flush: flush}
}

// Add adds a batch to the pending value: when fits (if not nil) says the
// batch does not fit in it, that value is flushed first; a value is opened
// (open, given the batch) and its window started when there is none; add
// writes the batch and
// reports whether the value is full, which flushes it. An error from add
// abandons the value (add has given up on the batches in it). The error
// returned is add's, open's, or flush's.
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

// expire is the timer of value gen; nothing is done when that value was
// flushed already. flush has reported a refusal: there is no caller.
func (w *Window[P]) expire(gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen == w.gen {
		_ = w.flushLocked(context.Background())
	}
}

// Pending calls fn on the pending value, the window's lock held, and
// reports whether there was one.
func (w *Window[P]) Pending(fn func(P)) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.has {
		fn(w.pending)
	}
	return w.has
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// ItemBuilder is what a backend writes for merge_window: how the batches
// of one window become one queue item. The window, the item's bound, the
// queue and the counts are the core's (NewMerging).
type ItemBuilder[R Request, P any] interface {
	// Begin starts an item.
	Begin() (P, error)
	// Write writes md into p. Before a batch that would take p past its
	// bound (Exporter.Bound, or the backend's own) it passes what p holds
	// to spill, which queues it; it returns whether p is full.
	Write(p P, md pmetric.Metrics, spill func(R)) (full bool, err error)
	// End returns p as a request, false when it holds nothing; p is done.
	End(p P) (R, bool, error)
}

// LostError is a Write or End that could not finish an item: its points are lost.
type LostError struct {
	Points int
	Err    error
}

func (e *LostError) Error() string { return e.Err.Error() }
func (e *LostError) Unwrap() error { return e.Err }

// merging is the one merge_window skeleton: a Window of a backend's items.
type merging[R Request, P any] struct {
	e      *Exporter[R]
	b      ItemBuilder[R, P]
	window *Window[P]
}

// NewMerging returns the Merger of e's merge_window over b's items.
func NewMerging[R Request, P any](e *Exporter[R], b ItemBuilder[R, P]) Merger {
	m := &merging[R, P]{e: e, b: b}
	m.window = NewWindow(e.s.MergeWindow, m.flush)
	return m
}

// Merge writes md into the pending item. A refusal is returned only when
// the item held md alone; either way it is counted.
func (m *merging[R, P]) Merge(ctx context.Context, md pmetric.Metrics) error {
	spilled := false
	err := m.window.Add(ctx, m.b.Begin, nil, func(p P) (bool, error) {
		full, err := m.b.Write(p, md, func(r R) {
			spilled = true
			_ = m.e.Enqueue(ctx, r) // counted there
		})
		m.lost(err)
		return full, err
	})
	if spilled {
		return nil
	}
	return err
}

// Flush queues the pending item (at shutdown).
func (m *merging[R, P]) Flush(ctx context.Context) error { return m.window.Flush(ctx) }

func (m *merging[R, P]) flush(ctx context.Context, p P) error {
	r, ok, err := m.b.End(p)
	if err != nil {
		m.lost(err)
		return err
	}
	if !ok {
		return nil
	}
	return m.e.Enqueue(ctx, r)
}

func (m *merging[R, P]) lost(err error) {
	var le *LostError
	if errors.As(err, &le) {
		m.e.Lost(le.Err, le.Points)
	}
}

// PendingItem calls fn on the item m holds, if any, under its window's lock
// (for tests of a backend's items).
func PendingItem[R Request, P any](m Merger, fn func(P)) bool {
	mm, ok := m.(*merging[R, P])
	return ok && mm.window.Pending(fn)
}

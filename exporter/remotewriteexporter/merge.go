// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"math"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// mergeMaxBytes bounds a merged queue item's compressed requests (checked
// after each batch and each request): a large host's scrape is a few items,
// not one it would hold twice in memory (merged, and read back to send),
// and bbolt's leaves hold several items (docs/performance-pipelines.md,
// Remote write).
const mergeMaxBytes = 4 << 20

// merge_window's item is a batchState: the batches are written into the
// same remote-write requests (translator.add), up to max_batch_size_bytes
// each, so the receiver's batch per instance makes requests of a useful
// size without a batch processor in front.

// openMerged starts the requests of a merged item.
func (e *remoteWrite) openMerged() (*batchState, error) {
	st := e.tr.begin()
	st.capItems, st.capBytes = e.itemBound()
	return st, nil
}

// merge translates md into the pending requests, which go to the queue
// when they reach the item bound. A series that would make the item
// larger than half of queue_size puts what came before it in the queue
// first, as an item of its own (spillLocked), so a large batch is split
// and never takes the batches accepted before it down with it. An error is
// the queue's refusal of an item that holds all of md; when part of md
// went into the queue already, the refusal is logged, not returned, as it
// is not md's alone.
func (e *remoteWrite) merge(ctx context.Context, md pmetric.Metrics) error {
	spilled := false
	err := e.window.Add(ctx, e.openMerged, nil, func(st *batchState) (bool, error) {
		if st.capItems > 0 || st.capBytes > 0 {
			st.spill = func(st *batchState) {
				spilled = true
				e.spillLocked(ctx, st)
			}
		}
		skipped := e.tr.add(st, md)
		st.spill = nil
		e.reportUntranslated(skipped.err())
		return e.full(st), nil
	})
	if spilled {
		return nil
	}
	return err
}

// itemBound is the bound on a merged item, for a batchState: half of the
// queue's capacity (at least 1), in samples (items sizer) or in bytes of
// compressed requests (bytes sizer); 0 and 0 for the requests sizer or no
// queue. Half, as in full: an item as large as the queue waits until the
// queue is empty.
func (e *remoteWrite) itemBound() (items, bytes int) {
	if e.capacity <= 0 {
		return 0, 0
	}
	bound := int(min(max(e.capacity/2, 1), math.MaxInt))
	switch e.sizer {
	case exporterhelper.RequestSizerTypeItems:
		return bound, 0
	case exporterhelper.RequestSizerTypeBytes:
		return 0, bound
	default:
		return 0, 0
	}
}

// spillLocked puts the requests st holds in the queue as one item, in the
// middle of a batch, and leaves st with none; the window's lock held. An
// item the queue refuses is logged with its sample count: those samples
// are lost.
func (e *remoteWrite) spillLocked(ctx context.Context, st *batchState) {
	st.flush()
	if len(st.payloads) == 0 {
		return
	}
	req := newRequest(st.payloads, st.samples)
	req.proto = st.proto
	st.payloads, st.samples, st.bytes, st.itemsDone = nil, nil, 0, 0
	if err := e.enqueueMerged(ctx, req); err != nil {
		e.report.NotQueued(err, req.ItemsCount(), e.backlog())
	}
}

// full reports whether the pending requests reached the item bound:
// mergeMaxBytes of compressed requests, or half of queue_size (items as
// large as the queue would make the pipeline wait for an empty one).
func (e *remoteWrite) full(st *batchState) bool {
	if st.bytes >= mergeMaxBytes {
		return true
	}
	if e.capacity <= 0 {
		return false
	}
	switch e.sizer {
	case exporterhelper.RequestSizerTypeBytes:
		return int64(st.bytes+len(st.raw)) >= e.capacity/2
	case exporterhelper.RequestSizerTypeItems:
		return int64(st.itemsDone+st.inRaw) >= e.capacity/2
	default:
		return false
	}
}

// flushMerged compresses the pending requests and puts them in the queue
// as one item. A refusal is logged with the item's sample count (the item
// holds batches accepted before too) and returned.
func (e *remoteWrite) flushMerged(ctx context.Context, st *batchState) error {
	req := e.tr.end(st)
	if len(req.payloads) == 0 {
		return nil
	}
	err := e.enqueueMerged(ctx, req)
	if err != nil {
		e.report.NotQueued(err, req.ItemsCount(), e.backlog())
	}
	return err
}

// enqueueMerged puts a merged item in the queue; a permanent error for one
// larger than the queue (only a series alone larger than it: spills keep
// merged items within half of it).
func (e *remoteWrite) enqueueMerged(ctx context.Context, req *request) error {
	if err := e.sender.TooLarge(req, "an item of merged batches"); err != nil {
		return err
	}
	return e.sender.Enqueue(ctx, e.inner, req)
}

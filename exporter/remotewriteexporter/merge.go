// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"math"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// mergeMaxBytes makes a large host's scrape a few items, not one held twice
// in memory (merged, and read back to send).
const mergeMaxBytes = 4 << 20

// openMerged starts a merged item.
func (e *remoteWrite) openMerged() (*batchState, error) {
	st := e.tr.begin()
	st.capItems, st.capBytes = e.itemBound()
	return st, nil
}

// merge translates md into the pending item. A large batch spills into
// items of its own, so that it never takes the batches before it down; a
// refusal is returned only when the item holds md alone, else logged.
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

// itemBound is half the queue (0, 0: none): an item as large as the queue
// would wait for it to empty.
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

// spillLocked queues st's requests as one item mid-batch; the window's lock is held.
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

// full reports whether the pending requests reached mergeMaxBytes or half the queue.
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

// flushMerged queues the pending item; a refusal is logged and returned.
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

// enqueueMerged queues a merged item, refusing one larger than the queue.
func (e *remoteWrite) enqueueMerged(ctx context.Context, req *request) error {
	if err := e.sender.TooLarge(req, "an item of merged batches"); err != nil {
		return err
	}
	return e.sender.Enqueue(ctx, e.inner, req)
}

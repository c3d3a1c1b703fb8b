// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// mergeMaxBytes makes a large host's scrape a few items, not one held twice
// in memory (merged, and read back to send).
const mergeMaxBytes = 4 << 20

// merger writes the batches that come within merge_window into the
// requests of one queue item, translated as they come.
type merger struct {
	tr     *translator.Translator
	sender *pushqueue.Sender[*request]
	report *deliveryreport.Report
	window *pushqueue.Window[*translator.Batch]
	// enqueue puts an item in the exporter's queue (which Start may replace).
	enqueue func(context.Context, *request) error
}

// open starts a merged item.
func (e *merger) open() (*translator.Batch, error) {
	st := e.tr.Begin()
	st.CapItems, st.CapBytes = e.itemBound()
	return st, nil
}

// merge translates md into the pending item. A large batch spills into
// items of its own, so that it never takes the batches before it down; a
// refusal is returned only when the item holds md alone, else logged.
func (e *merger) merge(ctx context.Context, md pmetric.Metrics) error {
	spilled := false
	err := e.window.Add(ctx, e.open, nil, func(st *translator.Batch) (bool, error) {
		if st.CapItems > 0 || st.CapBytes > 0 {
			st.Spill = func(st *translator.Batch) {
				spilled = true
				e.spillLocked(ctx, st)
			}
		}
		skipped := e.tr.Add(st, md)
		st.Spill = nil
		reportUntranslated(e.report, skipped)
		return e.full(st.Size()), nil
	})
	if spilled {
		return nil
	}
	return err
}

// itemBound is the sender's HalfQueue, for a translator.Batch.
func (e *merger) itemBound() (items, bytes int) {
	i, b := e.sender.HalfQueue()
	return int(min(i, math.MaxInt)), int(min(b, math.MaxInt))
}

// spillLocked queues st's requests as one item mid-batch; the window's lock is held.
func (e *merger) spillLocked(ctx context.Context, st *translator.Batch) {
	w := st.Take()
	if len(w.Payloads) == 0 {
		return
	}
	req := requestOf(w)
	if err := e.enqueueMerged(ctx, req); err != nil {
		e.report.NotQueued(err, req.ItemsCount(), e.sender.Backlog())
	}
}

// full reports whether the pending requests reached mergeMaxBytes or half the queue.
func (e *merger) full(st translator.Size) bool {
	if st.Compressed >= mergeMaxBytes {
		return true
	}
	items, bytes := e.sender.HalfQueue()
	return (bytes > 0 && int64(st.Bytes) >= bytes) ||
		(items > 0 && int64(st.Samples) >= items)
}

// flushMerged queues the pending item; a refusal is logged and returned.
func (e *merger) flush(ctx context.Context, st *translator.Batch) error {
	req := requestOf(e.tr.End(st))
	if len(req.payloads) == 0 {
		return nil
	}
	err := e.enqueueMerged(ctx, req)
	if err != nil {
		e.report.NotQueued(err, req.ItemsCount(), e.sender.Backlog())
	}
	return err
}

// enqueueMerged queues a merged item, refusing one larger than the queue.
func (e *merger) enqueueMerged(ctx context.Context, req *request) error {
	if err := e.sender.TooLarge(req, "an item of merged batches"); err != nil {
		return err
	}
	return e.enqueue(ctx, req)
}

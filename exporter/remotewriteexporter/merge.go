// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// mergeMaxBytes bounds a merged queue item: about 4 MiB of compressed
// requests (it is checked after each batch and each compressed request), so
// a large host's scrape is a few items. One item a scrape kept the scrape
// twice in memory (merged, and read back to be sent); smaller items let
// bbolt's leaves hold several items again and write as much as not
// merging (docs/performance-pipelines.md, Remote write).
const mergeMaxBytes = 4 << 20

// merger holds the batches that came within merge_window of the first,
// translated into one set of requests, to be stored as one item of the
// sending queue.
//
// Why one item: exporterhelper's persistent queue writes an item when it
// comes, again when it is read (the read index lives next to it), and
// deletes it when it is done; bbolt rewrites the whole leaf page of every
// key it changes, and a leaf holds at least two keys, so a scrape's
// batches in the queue at once made each commit rewrite several of them.
//
// Why one set of requests: the batches are written into the same requests
// (translator.add), up to max_batch_size_bytes each, so the receiver's
// batch per instance needs no batch processor in front to make requests of
// a useful size: the processor keeps a whole scrape of pdata for its
// timeout, and a request per batch costs CPU (docs/performance-memory.md).
type merger struct {
	// mu guards the fields below; it is held while a batch is
	// translated and while a merged item is put in the queue, so that
	// items enter the queue in order.
	mu      sync.Mutex
	pending *batchState
	timer   *time.Timer
}

// merge translates md into the pending requests, starting them (and their
// merge_window timer) when there are none, and puts them in the queue at
// once when they reached the item bound. A series that would make the item
// larger than half of queue_size puts what came before it in the queue
// first, as an item of its own (spillLocked; the rest of md goes on in the
// next), so a large batch is split and never takes the batches accepted
// before it down with it. An error is the queue's refusal of an item that
// holds all of md (its samples, those of earlier batches too, are logged
// as lost); when part of md went into the queue already, a refusal is
// logged with its count and not returned, as it is not md's alone.
func (e *remoteWrite) merge(ctx context.Context, md pmetric.Metrics) error {
	m := &e.merger
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		st := e.tr.begin()
		st.capItems, st.capBytes = e.itemBound()
		m.pending = st
		m.timer = time.AfterFunc(e.cfg.MergeWindow, func() { e.flushAsync(st) })
	}
	spilled := false
	if m.pending.capItems > 0 || m.pending.capBytes > 0 {
		m.pending.spill = func(st *batchState) {
			spilled = true
			e.spillLocked(ctx, st)
		}
	}
	skipped := e.tr.add(m.pending, md)
	m.pending.spill = nil
	e.reportUntranslated(skipped.err())
	if !e.full(m.pending) {
		return nil
	}
	n, err := e.flushLocked(ctx)
	if err != nil {
		// The item holds the batches accepted before this one too: the
		// caller counts only its own as refused.
		e.report.NotQueued(err, n, e.backlog())
		if spilled {
			return nil
		}
	}
	return err
}

// itemBound is the bound on a merged item, for a batchState: half of the
// queue's capacity (at least 1), in samples (items sizer) or in bytes of
// compressed requests (bytes sizer); 0 and 0 for the requests sizer (an
// item is one request whatever it holds) or no queue. Half, as in full:
// an item as large as the queue waits until the queue is empty.
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
// middle of a batch (overflows), and leaves st with none; mu held. An item
// the queue refuses (a series alone larger than the queue, or the queue
// full without block_on_overflow, or stopping) is logged with its sample
// count: those samples are lost.
func (e *remoteWrite) spillLocked(ctx context.Context, st *batchState) {
	st.flush()
	if len(st.payloads) == 0 {
		return
	}
	req := newRequest(st.payloads, st.samples)
	req.proto = st.proto
	st.payloads, st.samples, st.bytes, st.itemsDone = nil, nil, 0, 0
	err := e.tooLarge(req, "an item of merged batches")
	if err == nil {
		err = e.enqueue(ctx, req)
	}
	if err != nil {
		e.report.NotQueued(err, req.ItemsCount(), e.backlog())
	}
}

// full reports whether the pending requests reached the item bound:
// mergeMaxBytes of compressed requests, or half of queue_size (items of
// about half the queue, rather than items as large as it, which a queue
// with anything in it would make the pipeline wait for).
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

// flushLocked compresses the pending requests and puts them in the queue
// as one item; mu held. It returns the item's sample count (0 if nothing
// was pending) and the queue's error, or a permanent error for an item
// larger than the queue (only a series alone larger than it: overflows
// keeps merged batches within half of it).
func (e *remoteWrite) flushLocked(ctx context.Context) (int, error) {
	m := &e.merger
	st := m.pending
	if st == nil {
		return 0, nil
	}
	m.pending = nil
	m.timer.Stop()
	m.timer = nil
	req := e.tr.end(st)
	if len(req.payloads) == 0 {
		return 0, nil
	}
	if err := e.tooLarge(req, "an item of merged batches"); err != nil {
		return req.ItemsCount(), err
	}
	return req.ItemsCount(), e.enqueue(ctx, req)
}

// flushPending puts the pending requests, if any, in the queue (Shutdown).
func (e *remoteWrite) flushPending(ctx context.Context) (int, error) {
	e.merger.mu.Lock()
	defer e.merger.mu.Unlock()
	return e.flushLocked(ctx)
}

// flushAsync is merge_window's timer for the pending requests st: there is
// no caller to return an error to, so an item the queue refused (the
// exporter is stopping) is logged with its sample count. Nothing is done
// when st was flushed already (it filled up, or the exporter stopped).
func (e *remoteWrite) flushAsync(st *batchState) {
	m := &e.merger
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending != st {
		return
	}
	if n, err := e.flushLocked(context.Background()); err != nil {
		e.report.NotQueued(err, n, e.backlog())
	}
}

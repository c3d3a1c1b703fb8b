// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/golang/snappy"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
)

// mergeMaxBytes bounds a merged queue item: about 4 MiB of compressed
// requests (it is checked after each batch and each compressed request). A
// 64x1024 scrape (about 6.4 MB) is two items. Side by side there, two
// rounds: 16 MiB (one item) wrote 5.0-5.2 MB/s to disk but held 200-216 MiB
// of RSS, the whole scrape being kept twice (merged, and read back to be
// sent); 4 MiB 6.2-7.7 MB/s, 177-181 MiB and the least CPU (3.8 s/min);
// 2 MiB 21-24 MB/s, as much as not merging (22-25), leaves of bbolt
// holding several items again.
const mergeMaxBytes = 4 << 20

// merger holds the batches that came within merge_window of the first,
// translated into one set of requests, to be stored as one item of the
// sending queue.
//
// Why one item: exporterhelper's persistent queue writes an item when it
// comes, again when it is read (the read index lives next to it), and
// deletes it when it is done; bbolt rewrites the whole leaf page of every
// key it changes, and a leaf holds at least two keys. The seven batches of
// a 64x256 scrape in the queue at once made each of those commits rewrite
// two to four of them: 3.4-4.2 MB/s written to disk for 0.3 MB/s of
// requests (0.74 merged).
//
// Why one set of requests: the batches are written into the same requests
// (translator.add), up to max_batch_size_bytes each, so the receiver's
// batch per instance needs no batch processor in front to make requests of
// a useful size. Without the processor, 16x64 held 0.69-0.73 KiB a series
// against 1.27-1.35 with it (it keeps a whole scrape of pdata for its
// timeout); 64 requests a scrape instead of 7 cost 64x256 40-100 % more
// CPU until the batches shared requests (docs/performance-memory.md).
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
// larger than the queue puts what came before it in the queue first, as
// an item of its own (the rest of md goes on in the next): a batch over
// half of queue_size is split, and the batches accepted before it are
// never refused with it. An error is the queue's; the samples of the item
// it refused are not kept, and are logged with their count.
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
	var spillErr error
	if m.pending.capItems > 0 || m.pending.capBytes > 0 {
		m.pending.spill = func(st *batchState) {
			if err := e.spillLocked(ctx, st); err != nil {
				spillErr = err
			}
		}
	}
	skipped := e.tr.add(m.pending, md)
	m.pending.spill = nil
	if skipped > 0 {
		e.report.untranslated(skippedError(skipped))
	}
	if spillErr != nil {
		return spillErr
	}
	if !e.full(m.pending) {
		return nil
	}
	n, err := e.flushLocked(ctx)
	if err != nil {
		// The item holds the batches accepted before this one too: the
		// caller counts only its own as refused.
		e.set.Logger.Error("remote_write: merged batches not queued; their samples are lost",
			zap.Int("samples", n), zap.Error(err))
	}
	return err
}

// itemBound is the largest item the queue takes, for a batchState: its
// capacity in samples (items sizer) or in bytes of compressed requests
// (bytes sizer); 0 and 0 for the requests sizer (an item is one request
// whatever it holds) or no queue.
func (e *remoteWrite) itemBound() (items, bytes int) {
	if e.capacity <= 0 {
		return 0, 0
	}
	bound := int(min(e.capacity, math.MaxInt))
	switch e.sizer {
	case exporterhelper.RequestSizerTypeItems:
		return bound, 0
	case exporterhelper.RequestSizerTypeBytes:
		return 0, bound
	default:
		return 0, 0
	}
}

// overflows reports whether a series of entry bytes would make st's item
// larger than its bound: capItems samples, or else capBytes bytes of what
// the item can be at most once compressed (the finished requests, the
// compressed blocks of the one being written, snappy's worst case for the
// rest of it with the series, and the headers of two requests). For an
// empty item it may say yes: spillLocked then has nothing to put in the
// queue, and a series alone larger than the queue is refused when its
// item is (flushLocked). Small enough to be inlined: it runs for every
// series.
func (st *batchState) overflows(entry int) bool {
	if st.capItems > 0 {
		return st.itemsDone+st.inRaw >= st.capItems
	}
	return st.bytes+len(st.comp)+snappy.MaxEncodedLen(len(st.raw)+entry)+64 > st.capBytes
}

// spillLocked puts the requests st holds in the queue as one item, in the
// middle of a batch (overflows), and leaves st with none; mu held. Its
// error is the queue's: the item's samples are lost, and logged.
func (e *remoteWrite) spillLocked(ctx context.Context, st *batchState) error {
	st.flush()
	if len(st.payloads) == 0 {
		return nil
	}
	req := newRequest(st.payloads, st.samples)
	st.payloads, st.samples, st.bytes, st.itemsDone = nil, nil, 0, 0
	err := e.tooLarge(req, "an item of merged batches")
	if err == nil {
		err = e.enqueue(ctx, req)
	}
	if err != nil {
		e.set.Logger.Error("remote_write: merged batches not queued; their samples are lost",
			zap.Int("samples", req.ItemsCount()), zap.Error(err))
	}
	return err
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
// keeps merged batches within the queue).
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
		e.set.Logger.Error("remote_write: merged batches not queued; their samples are lost",
			zap.Int("samples", n), zap.Error(err))
	}
}

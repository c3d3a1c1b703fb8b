// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// mergeMaxBytes bounds a merged queue item: 4 MiB of compressed requests.
// A 64x1024 scrape (about 6.4 MB) is two items. Side by side there, two
// rounds: 16 MiB (one item) wrote 5.0-5.2 MB/s to disk but held 200-216 MiB
// of RSS, the whole scrape being kept twice (merged, and read back to be
// sent); 4 MiB 6.2-7.7 MB/s, 177-181 MiB and the least CPU (3.8 s/min);
// 2 MiB 21-24 MB/s, as much as not merging (22-25), leaves of bbolt
// holding several items again.
const mergeMaxBytes = 4 << 20

// merger holds the requests of the batches that came within merge_window
// of the first, to be stored as one item of the sending queue.
//
// Why: exporterhelper's persistent queue writes an item when it comes, again
// when it is read (the read index lives next to it), and deletes it when it
// is done; bbolt rewrites the whole leaf page of every key it changes, and a
// leaf holds at least two keys. The seven batches of a 64x256 scrape in the
// queue at once made each of those commits rewrite two to four of them:
// 3.4-4.2 MB/s written to disk for 0.3 MB/s of requests (0.74 merged).
type merger struct {
	// flushMu is held while a merged request is taken and put in the
	// queue, so that merged requests enter the queue in order.
	flushMu sync.Mutex
	// mu guards pending and timer.
	mu      sync.Mutex
	pending *request
	timer   *time.Timer
}

// merge adds req to the pending request, or, when it does not fit there,
// first puts the pending one in the queue (an error then is the queue's,
// and req is not kept). The pending request is put in the queue
// merge_window after it was started.
func (e *remoteWrite) merge(ctx context.Context, req *request) error {
	m := &e.merger
	for {
		m.mu.Lock()
		if m.pending == nil || e.fits(m.pending, req) {
			e.addPending(req)
			m.mu.Unlock()
			return nil
		}
		m.mu.Unlock()
		if _, err := e.flushPending(ctx); err != nil {
			return err
		}
	}
}

// fits reports whether req can join pending within the bounds.
func (e *remoteWrite) fits(pending, req *request) bool {
	if pending.bytes+req.bytes > mergeMaxBytes {
		return false
	}
	return e.capacity <= 0 || pending.size(e.sizer)+req.size(e.sizer) <= e.capacity
}

// addPending appends req to the pending request, or makes it the pending
// request and starts its timer; mu held.
func (e *remoteWrite) addPending(req *request) {
	m := &e.merger
	if m.pending != nil {
		m.pending.payloads = append(m.pending.payloads, req.payloads...)
		m.pending.samples = append(m.pending.samples, req.samples...)
		m.pending.bytes += req.bytes
		return
	}
	m.pending = req
	m.timer = time.AfterFunc(e.cfg.MergeWindow, e.flushPendingAsync)
}

// takePending returns the pending request (nil if none) and clears it; mu
// held.
func (e *remoteWrite) takePending() *request {
	m := &e.merger
	r := m.pending
	m.pending = nil
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	return r
}

// flushPending puts the pending request, if any, in the queue, and
// returns its sample count (0 if none) and the queue's error.
func (e *remoteWrite) flushPending(ctx context.Context) (int, error) {
	m := &e.merger
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	m.mu.Lock()
	r := e.takePending()
	m.mu.Unlock()
	if r == nil {
		return 0, nil
	}
	return r.ItemsCount(), e.enqueue(ctx, r)
}

// flushPendingAsync is the timer's flush: there is no caller to return an
// error to, so a request the queue refused (the exporter is stopping) is
// logged with its sample count.
func (e *remoteWrite) flushPendingAsync() {
	if n, err := e.flushPending(context.Background()); err != nil {
		e.set.Logger.Error("remote_write: merged batches not queued; their samples are lost",
			zap.Int("samples", n), zap.Error(err))
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package deliveryreport // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// Every is how often one cause is logged at most.
const Every = time.Minute

// Backlog is what this process has queued and not yet finished.
type Backlog struct {
	Size     int64  // under Sizer
	Sizer    string // the queue's sizer: bytes, items or requests
	Capacity int64  // sending_queue::queue_size; 0 without a queue
}

func (b Backlog) field() zap.Field {
	return zap.Dict("queued", zap.Int64("size", b.Size), zap.String("sizer", b.Sizer), zap.Int64("queue_size", b.Capacity))
}

// Report logs each cause at most once a minute with running totals, and a recovery once.
type Report struct {
	logger   *zap.Logger
	what     string // what the lines begin with: "Remote write", "otlp_durable"
	endpoint string
	now      func() time.Time

	mu   sync.Mutex
	last map[string]time.Time
	// totals since start
	rejectedRequests, rejectedItems  int64
	droppedBatches, droppedItems     int64
	notQueuedBatches, notQueuedItems int64
	untranslatedItems                int64
	notStoredItems                   int64
	// the current outage: since when sending fails, and the last cause
	failingSince time.Time
	lastCause    string
	// the recovery: delivered since the endpoint answered again
	recovering        bool
	recoveredAt       time.Time
	recoveredRequests int64
	recoveredItems    int64
}

// New returns the report of an exporter; what begins its lines.
func New(logger *zap.Logger, what, endpoint string) *Report {
	return &Report{logger: logger, what: what, endpoint: endpoint, now: time.Now, last: map[string]time.Time{}}
}

// due reports whether key may be logged now; r.mu is held.
func (r *Report) due(key string, now time.Time) bool {
	if t, ok := r.last[key]; ok && now.Sub(t) < Every {
		return false
	}
	r.last[key] = now
	return true
}

// Failed: a request failed and will be retried, after wait if known (else 0).
func (r *Report) Failed(cause string, err error, wait time.Duration, b Backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.failingSince.IsZero() {
		r.failingSince = now
	}
	r.lastCause = cause
	r.recovering = false
	if !r.due("failed:"+cause, now) {
		return
	}
	fields := []zap.Field{
		zap.String("endpoint", r.endpoint), zap.String("cause", cause), zap.Error(err),
		zap.Duration("failing_for", now.Sub(r.failingSince).Round(time.Second)),
		b.field(), zap.Int64("dropped_batches_total", r.droppedBatches),
	}
	if wait > 0 {
		fields = append(fields, zap.Duration("retry_in", wait))
	}
	r.logger.Warn(r.what+" failed; the batch waits in the queue and is retried", fields...)
}

// Delivered: a request of n items was accepted.
func (r *Report) Delivered(n int, b Backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.failingSince.IsZero() {
		r.logger.Info(r.what+" delivers again; sending the backlog",
			zap.String("endpoint", r.endpoint), zap.Duration("failed_for", now.Sub(r.failingSince).Round(time.Second)),
			zap.String("last_cause", r.lastCause), b.field(), zap.Int64("dropped_batches_total", r.droppedBatches))
		r.failingSince = time.Time{}
		r.recovering, r.recoveredAt = true, now
		r.recoveredRequests, r.recoveredItems = 0, 0
	}
	if r.recovering {
		r.recoveredRequests++
		r.recoveredItems += int64(n)
	}
}

// Settled: a batch is finished; after a recovery, an empty backlog ends it.
func (r *Report) Settled(b Backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recovering || b.Size > 0 {
		return
	}
	r.recovering = false
	r.logger.Info(r.what+" backlog delivered",
		zap.String("endpoint", r.endpoint), zap.Int64("requests", r.recoveredRequests),
		zap.Int64("items", r.recoveredItems), zap.Duration("took", r.now().Sub(r.recoveredAt).Round(time.Millisecond)))
}

// Rejected: the endpoint refused a request's content; it is dropped.
func (r *Report) Rejected(cause string, err error, n int, b Backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejectedRequests++
	r.rejectedItems += int64(n)
	if !r.due("rejected:"+cause, r.now()) {
		return
	}
	r.logger.Warn(r.what+" request rejected by the endpoint; dropped, the rest goes on",
		zap.String("endpoint", r.endpoint), zap.String("cause", cause), zap.Error(err),
		zap.Int("items", n), zap.Int64("rejected_requests_total", r.rejectedRequests),
		zap.Int64("rejected_items_total", r.rejectedItems), b.field())
}

// Dropped: a queued batch was given up; what says which and why
// ("the oldest batch: queue full").
func (r *Report) Dropped(what string, n, size int, b Backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.droppedBatches++
	r.droppedItems += int64(n)
	if !r.due("dropped:"+what, r.now()) {
		return
	}
	r.logger.Warn(r.what+" dropped "+what,
		zap.String("endpoint", r.endpoint), zap.Int("items", n), zap.Int("bytes", size),
		zap.Int64("dropped_batches_total", r.droppedBatches), zap.Int64("dropped_items_total", r.droppedItems), b.field())
}

// NotQueued: the queue refused a new batch; its items are lost.
func (r *Report) NotQueued(err error, n int, b Backlog) {
	cause := QueueCause(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notQueuedBatches++
	r.notQueuedItems += int64(n)
	if !r.due("not queued:"+cause, r.now()) {
		return
	}
	r.logger.Error(r.what+": a new batch was not queued; its items are lost",
		zap.String("cause", cause), zap.Error(err), zap.Int("items", n),
		zap.Int64("not_queued_batches_total", r.notQueuedBatches), zap.Int64("not_queued_items_total", r.notQueuedItems), b.field())
}

// Untranslated: n points could not be translated and are dropped.
func (r *Report) Untranslated(err error, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.untranslatedItems += int64(n)
	if r.due("untranslated", r.now()) {
		r.logger.Warn(r.what+": some points could not be translated and are not sent", zap.Error(err),
			zap.Int("items", n), zap.Int64("untranslated_items_total", r.untranslatedItems))
	}
}

// NotStored: the endpoint accepted a request but stored n items fewer
// (remote write 2.0's written headers); they are not sent again.
func (r *Report) NotStored(n int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notStoredItems += int64(n)
	if r.due("not stored", r.now()) {
		r.logger.Warn(r.what+": the endpoint accepted a request but did not store all of it",
			zap.String("endpoint", r.endpoint), zap.Error(err), zap.Int("items", n),
			zap.Int64("not_stored_items_total", r.notStoredItems))
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"sync"
	"time"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.uber.org/zap"
)

// reportEvery is how often one cause is logged at most.
const reportEvery = time.Minute

// backlog is what this process has queued and not yet finished.
type backlog struct {
	size     int64 // under sizer
	sizer    exporterhelper.RequestSizerType
	capacity int64 // sending_queue::queue_size; 0 without a queue
}

func (b backlog) field() zap.Field {
	return zap.Dict("queued", zap.Int64("size", b.size), zap.String("sizer", b.sizer.String()), zap.Int64("queue_size", b.capacity))
}

// report logs what happens to the batches: each cause (a failure, a
// rejection, a drop) at most once a minute, with running totals, so that an
// outage is loud without flooding the log; and the recovery, once.
type report struct {
	logger   *zap.Logger
	endpoint string
	now      func() time.Time

	mu   sync.Mutex
	last map[string]time.Time
	// totals since start
	rejectedRequests, rejectedSamples int64
	droppedBatches, droppedSamples    int64
	// the current outage: since when sending fails, and the last cause
	failingSince time.Time
	lastCause    string
	// the recovery: delivered since the endpoint answered again
	recovering        bool
	recoveredAt       time.Time
	recoveredRequests int64
	recoveredSamples  int64
}

func newReport(logger *zap.Logger, endpoint string) *report {
	return &report{logger: logger, endpoint: endpoint, now: time.Now, last: map[string]time.Time{}}
}

// due reports whether key may be logged now; r.mu is held.
func (r *report) due(key string, now time.Time) bool {
	if t, ok := r.last[key]; ok && now.Sub(t) < reportEvery {
		return false
	}
	r.last[key] = now
	return true
}

// failed: a request failed and will be retried after wait (0: dropped,
// retries are off).
func (r *report) failed(err error, wait time.Duration, b backlog) {
	cause := "error"
	if se, ok := err.(*sendError); ok { //nolint:errorlint // post returns it unwrapped
		cause = se.cause
	}
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
	r.logger.Warn("Remote write failed; the batch waits in the queue and is retried",
		zap.String("endpoint", r.endpoint), zap.String("cause", cause), zap.Error(err),
		zap.Duration("retry_in", wait), zap.Duration("failing_for", now.Sub(r.failingSince).Round(time.Second)),
		b.field(), zap.Int64("dropped_batches_total", r.droppedBatches))
}

// delivered: a request of n samples was accepted.
func (r *report) delivered(n int, b backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.failingSince.IsZero() {
		r.logger.Info("Remote write delivers again; sending the backlog",
			zap.String("endpoint", r.endpoint), zap.Duration("failed_for", now.Sub(r.failingSince).Round(time.Second)),
			zap.String("last_cause", r.lastCause), b.field(), zap.Int64("dropped_batches_total", r.droppedBatches))
		r.failingSince = time.Time{}
		r.recovering, r.recoveredAt = true, now
		r.recoveredRequests, r.recoveredSamples = 0, 0
	}
	if r.recovering {
		r.recoveredRequests++
		r.recoveredSamples += int64(n)
	}
}

// settled: a batch is finished; after a recovery, an empty backlog ends it.
func (r *report) settled(b backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recovering || b.size > 0 {
		return
	}
	r.recovering = false
	r.logger.Info("Remote write backlog delivered",
		zap.String("endpoint", r.endpoint), zap.Int64("requests", r.recoveredRequests),
		zap.Int64("samples", r.recoveredSamples), zap.Duration("took", r.now().Sub(r.recoveredAt).Round(time.Millisecond)))
}

// rejected: the endpoint refused a request of n samples for its content.
func (r *report) rejected(se *sendError, n int, b backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejectedRequests++
	r.rejectedSamples += int64(n)
	if !r.due("rejected:"+se.cause, r.now()) {
		return
	}
	r.logger.Warn("Remote write request rejected by the endpoint; dropped, the rest goes on",
		zap.String("endpoint", r.endpoint), zap.String("cause", se.cause), zap.Error(se.err),
		zap.Int("samples", n), zap.Int64("rejected_requests_total", r.rejectedRequests),
		zap.Int64("rejected_samples_total", r.rejectedSamples), b.field())
}

// dropped: a whole batch was given up (the queue needed its room, or it was
// retried for max_elapsed_time).
func (r *report) dropped(req *request, why string, b backlog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.droppedBatches++
	r.droppedSamples += int64(req.ItemsCount())
	if !r.due("dropped:"+why, r.now()) {
		return
	}
	r.logger.Warn("Remote write dropped the oldest batch: "+why,
		zap.String("endpoint", r.endpoint), zap.Int("samples", req.ItemsCount()), zap.Int("bytes", req.bytes),
		zap.Int64("dropped_batches_total", r.droppedBatches), zap.Int64("dropped_samples_total", r.droppedSamples), b.field())
}

// untranslated: some points of a batch could not be translated.
func (r *report) untranslated(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.due("untranslated", r.now()) {
		r.logger.Warn("Remote write: some points could not be translated and are not sent", zap.Error(err))
	}
}

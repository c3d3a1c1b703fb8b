// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"
)

// stats is what one exporter delivered, rejected, retried and dropped since
// start: every count is taken here, with the log line of the same event,
// so that the three exporters cannot differ on what "sent" means.
type stats struct {
	id     string
	start  time.Time
	report *deliveryreport.Report
	queue  *backlog

	mu                    sync.Mutex
	pointsSent, bytesSent int64
	retried               map[string]int64
	rejected              map[string]int64
	dropped               map[string]int64
	notWritten            int64
	queuedNewest          uint64
	sentNewest            uint64
	// inFlight are the IDs being sent; the oldest is the oldest still queued.
	inFlight map[uint64]int
	// lastOldest is the oldest in flight when last seen, for a backlog
	// between two batches (nothing in flight for a moment).
	lastOldest uint64
}

func newStats(id string, report *deliveryreport.Report, queue *backlog) *stats {
	return &stats{
		id: id, start: time.Now(), report: report, queue: queue,
		retried: map[string]int64{}, rejected: map[string]int64{}, dropped: map[string]int64{},
		inFlight: map[uint64]int{},
	}
}

// reason is a cause as a label value: "http 503" is http_503, "grpc
// ResourceExhausted" grpc_resource_exhausted.
func reason(cause string) string {
	var b strings.Builder
	prev := ' '
	for _, r := range cause {
		switch {
		case r == ' ' || r == '-' || r == '.' || r == ':':
			if prev != '_' {
				b.WriteRune('_')
			}
			prev = '_'
			continue
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteRune('_')
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return b.String()
}

// queued: a batch made at id went into the queue.
func (s *stats) queued(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queuedNewest = max(s.queuedNewest, id)
}

// sending and settled bracket an attempt to deliver the batch made at id.
func (s *stats) sending(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight[id]++
	s.queuedNewest = max(s.queuedNewest, id) // an earlier process's
}

func (s *stats) settled(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[id] <= 1 {
		delete(s.inFlight, id)
	} else {
		s.inFlight[id]--
	}
}

// sent: the backend accepted points in bytes of the batch made at id.
func (s *stats) sent(points, bytes int, id uint64) {
	s.mu.Lock()
	s.pointsSent += int64(points)
	s.bytesSent += int64(bytes)
	s.sentNewest = max(s.sentNewest, id)
	s.mu.Unlock()
	s.report.Delivered(points, s.queue.report())
}

// retried: an attempt of points failed for cause and is retried.
func (s *stats) retriedAfter(cause string, err error, points int, wait time.Duration) {
	s.mu.Lock()
	s.retried[reason(cause)] += int64(points)
	s.mu.Unlock()
	s.report.Failed(cause, err, wait, s.queue.report())
}

// rejectedFor: the backend refused points for cause (or they can never fit); never sent again.
func (s *stats) rejectedFor(cause string, err error, points int) {
	s.mu.Lock()
	s.rejected[reason(cause)] += int64(points)
	s.mu.Unlock()
	s.report.Rejected(cause, err, points, s.queue.report())
}

// droppedFor: a queued batch of points given up on this side, for why.
func (s *stats) droppedFor(why string, points, bytes int) {
	s.mu.Lock()
	s.dropped[why] += int64(points)
	s.mu.Unlock()
	if droppedWords[why] == "" {
		return // logged where it happens
	}
	s.report.Dropped(droppedWords[why], points, bytes, s.queue.report())
}

// droppedWords say in the log which batch was dropped and why.
var droppedWords = map[string]string{
	deliverystats.ReasonOldest:         "the oldest batch: queue full",
	deliverystats.ReasonMaxElapsedTime: "a batch: retried for retry_on_failure::max_elapsed_time",
	deliverystats.ReasonShutdown:       "a batch: stopping with an in-memory queue",
	deliverystats.ReasonRetryDisabled:  "a batch: it failed and retry_on_failure is off",
}

// tooLarge: a batch larger than the whole queue, never queued.
func (s *stats) tooLarge(err error, points int) {
	s.mu.Lock()
	s.rejected[deliverystats.ReasonTooLarge] += int64(points)
	s.mu.Unlock()
	s.report.NotQueued(err, points, s.queue.report())
}

// notQueued: the queue refused a new batch of points.
func (s *stats) notQueued(err error, points int) {
	why := deliverystats.ReasonQueueFull
	switch deliveryreport.QueueCause(err) {
	case "disk full":
		why = deliverystats.ReasonDiskFull
	case "stopped":
		why = deliverystats.ReasonShutdown
	}
	s.mu.Lock()
	s.dropped[why] += int64(points)
	s.mu.Unlock()
	s.report.NotQueued(err, points, s.queue.report())
}

// untranslatable: points the protocol cannot carry, never queued.
func (s *stats) untranslatable(err error, points int) {
	s.mu.Lock()
	s.dropped[deliverystats.ReasonUntranslatable] += int64(points)
	s.mu.Unlock()
	s.report.Untranslated(err, points)
}

// notWrittenBy: accepted, but the backend stored points fewer.
func (s *stats) notWrittenBy(points int, err error) {
	s.mu.Lock()
	s.notWritten += int64(points)
	s.mu.Unlock()
	s.report.NotStored(points, err)
}

func idTime(id uint64) time.Time {
	if id == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(id))
}

func copyCounts(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// snapshot is what deliverystats shows of this exporter.
func (s *stats) snapshot() deliverystats.Snapshot {
	q := s.queue.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest uint64
	for id := range s.inFlight {
		if id != 0 && (oldest == 0 || id < oldest) {
			oldest = id
		}
	}
	switch {
	case oldest != 0:
		s.lastOldest = oldest
	case q.items > 0 || q.bytes > 0:
		oldest = s.lastOldest
	}
	return deliverystats.Snapshot{
		Exporter: s.id, Start: s.start,
		PointsSent: s.pointsSent, BytesSent: s.bytesSent,
		PointsRetried: copyCounts(s.retried), PointsRejected: copyCounts(s.rejected),
		PointsDropped: copyCounts(s.dropped), PointsNotWritten: s.notWritten,
		QueuePoints: q.items, QueueBytes: q.bytes,
		QueueCapacity: s.queue.capacity, QueueSizer: s.queue.sizerName(),
		QueuedNewest: idTime(s.queuedNewest), SentNewest: idTime(s.sentNewest), QueuedOldest: idTime(oldest),
	}
}

// Tally is what a Send says of the parts of a request it settled (remote
// write's requests of one queue item). A Send that records nothing is
// counted whole: sent on nil, rejected on a permanent error, else retried.
type Tally struct {
	recorded bool
	failed   int // points of the part whose failure Send returns; -1: unsaid
	s        *stats
	id       uint64
}

// Sent: the backend accepted points in bytes.
func (t *Tally) Sent(points, bytes int) {
	t.recorded = true
	t.s.sent(points, bytes, t.id)
}

// Rejected: the backend refused points for cause; they are not sent again.
func (t *Tally) Rejected(cause string, err error, points int) {
	t.recorded = true
	t.s.rejectedFor(cause, err, points)
}

// NotWritten: the backend accepted but did not store points.
func (t *Tally) NotWritten(points int, err error) { t.s.notWrittenBy(points, err) }

// Failing says how many points the retryable error Send returns is about.
func (t *Tally) Failing(points int) { t.failed = points }

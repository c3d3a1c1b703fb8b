// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package deliverystats is where each push exporter of this process shows
// what its sender counted (exporter/internal/pushqueue), and where the
// selftelemetry receiver reads it to send it with the data. The collector
// has no in-process route from a component's own telemetry into a
// pipeline, so the counts meet here.
package deliverystats // import "github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// Reasons of a retry, a rejection or a drop, as the label `reason` shows them.
const (
	// ReasonOldest: the oldest queued batch, dropped for the newest while sending failed.
	ReasonOldest = "oldest"
	// ReasonQueueFull: a new batch the queue refused.
	ReasonQueueFull = "queue_full"
	// ReasonDiskFull: a new batch the persistent queue could not write.
	ReasonDiskFull = "disk_full"
	// ReasonShutdown: a batch given up while the exporter stopped.
	ReasonShutdown = "shutdown"
	// ReasonMaxElapsedTime: a batch retried for retry_on_failure::max_elapsed_time.
	ReasonMaxElapsedTime = "max_elapsed_time"
	// ReasonTooLarge: a batch larger than the whole queue.
	ReasonTooLarge = "too_large"
	// ReasonUntranslatable: points the exporter's protocol cannot carry.
	ReasonUntranslatable = "untranslatable"
	// ReasonRetryDisabled: a failed batch, with retry_on_failure off.
	ReasonRetryDisabled = "retry_disabled"
	// ReasonUnreadable: a stored batch that does not decode (points unknown: counted 0).
	ReasonUnreadable = "unreadable"
)

// DroppedReasons are the reasons of PointsDropped, all known from the
// start: the selftelemetry receiver publishes each at 0 from the start, so
// that increase() sees an exporter's first drop.
var DroppedReasons = []string{
	ReasonOldest, ReasonQueueFull, ReasonDiskFull, ReasonShutdown,
	ReasonMaxElapsedTime, ReasonUntranslatable, ReasonRetryDisabled, ReasonUnreadable,
}

// Snapshot is one exporter's delivery since this process started. Points
// are OTLP data points; remote write counts its samples (one per point of
// a gauge or a sum, all the receiver sends).
type Snapshot struct {
	// Exporter is the component ID ("remote_write", "otlp_durable/backup").
	Exporter string
	// Start is when the counts began (cumulative start time).
	Start time.Time

	// PointsSent and BytesSent: accepted by the backend (2xx, gRPC OK).
	PointsSent, BytesSent int64
	// PointsRetried: points of attempts that failed and are retried, by reason.
	PointsRetried map[string]int64
	// PointsRejected: refused by the backend or too large; never sent again.
	PointsRejected map[string]int64
	// PointsDropped: given up on this side, by reason.
	PointsDropped map[string]int64
	// PointsNotWritten: accepted but not stored, as the backend said
	// (remote write 2.0's X-Prometheus-Remote-Write-Samples-Written).
	PointsNotWritten int64

	// QueuePoints and QueueBytes: the backlog, an earlier process's included.
	QueuePoints, QueueBytes int64
	// QueueCapacity is sending_queue::queue_size in QueueSizer's unit
	// ("bytes", "items" or "requests"); 0 without a queue.
	QueueCapacity int64
	QueueSizer    string

	// QueuedNewest: when the newest batch put in the queue was made.
	QueuedNewest time.Time
	// SentNewest: when the newest batch the backend accepted was made.
	SentNewest time.Time
	// QueuedOldest: when the oldest batch still queued was made; zero when
	// nothing is known to be queued.
	QueuedOldest time.Time
}

type source struct {
	id       uint64
	snapshot func() Snapshot
}

var (
	mu      sync.Mutex
	nextID  uint64
	sources []source
)

// Register makes snapshot readable by All until the returned function is called.
func Register(snapshot func() Snapshot) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	nextID++
	id := nextID
	sources = append(sources, source{id: id, snapshot: snapshot})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		sources = slices.DeleteFunc(sources, func(s source) bool { return s.id == id })
	}
}

// All returns every registered exporter's snapshot, by exporter ID.
func All() []Snapshot {
	mu.Lock()
	fns := make([]func() Snapshot, len(sources))
	for i, s := range sources {
		fns[i] = s.snapshot
	}
	mu.Unlock()
	out := make([]Snapshot, len(fns))
	for i, fn := range fns {
		out[i] = fn()
	}
	slices.SortStableFunc(out, func(a, b Snapshot) int { return strings.Compare(a.Exporter, b.Exporter) })
	return out
}

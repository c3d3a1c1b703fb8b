// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.uber.org/zap"
)

// mergeMaxBytes bounds a merged request: 2 MB of protobuf before
// compression, under half of the 4 MiB a gRPC server takes by default (the
// collector's OTLP receiver included). A batch larger than that goes alone,
// as it would without merge_window.
const mergeMaxBytes = 2_000_000

// merging is the exporter with merge_window: the batches that come within
// the window of the first are sent as one request, their protobuf encodings
// back to back (an ExportMetricsServiceRequest is its repeated
// resource_metrics field, so two encoded requests make one), compressed
// once and stored as one item of the queue.
//
// Why: the receiver hands on a batch per instance. Sent alone, each is a
// small request and an item of the queue on disk; joined by the batch
// processor, the whole scrape waits in it as pdata for the processor's
// timeout, most of what 16x64 held above an idle collector
// (docs/performance-memory.md). Encoded at once, a batch takes a third of
// its pdata's memory while it waits, and none of it once compressed.
type merging struct {
	exporter.Metrics // the exporterhelper: queue, retries, push
	set              exporter.Settings
	window           time.Duration
	// sizer and capacity of the sending queue (capacity 0: no queue), to
	// keep a merged request within half of it.
	sizer    exporterhelper.RequestSizerType
	capacity int64
	// compression is the configured compression's gRPC name ("": none).
	compression string

	// mu guards the fields below; it is held while a merged request is
	// put in the queue, so that requests enter it in order.
	mu     sync.Mutex
	raw    []byte // the pending batches' encodings, back to back
	points int
	// The pending buffer is kept from one request to the next while a
	// scrape fills them (a 64x256 scrape is three 2 MB requests; a buffer
	// made anew for each, grown as it fills, cost that host 0.6 CPU s/min)
	// and let go when merge_window ends a request, the end of a scrape:
	// kept for the 5 s between scrapes, its 0.5 MB at 16x64 was live at
	// every collection for the one moment it is written. peak is the
	// largest request since the last window's end, the size the next
	// scrape's buffer is made at once.
	peak, nextSize int
	timer          *time.Timer
	// gen counts merged requests started, so that a timer of one that
	// was flushed already does nothing.
	gen uint64
}

// preparedKey carries a merged request through the exporterhelper to
// encode.
type preparedKey struct{}

// ConsumeMetrics encodes md and adds it to the pending request, which goes
// to the queue merge_window after its first batch, or at once when it
// reached its bound. A batch that would take the pending request past
// mergeMaxBytes starts the next one.
func (m *merging) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("otlp_durable: encoding the batch: %w", err))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.raw) > 0 && len(m.raw)+len(body) > mergeMaxBytes {
		m.flushLocked(ctx, false)
	}
	if len(m.raw) == 0 {
		if m.raw == nil {
			m.raw = make([]byte, 0, max(min(m.nextSize, mergeMaxBytes), len(body)))
		}
		m.gen++
		gen := m.gen
		m.timer = time.AfterFunc(m.window, func() { m.flushAsync(gen) })
	}
	m.raw = append(m.raw, body...)
	m.points += md.DataPointCount()
	if m.full() {
		m.flushLocked(ctx, false)
	}
	return nil
}

// full reports whether the pending request reached its bound:
// mergeMaxBytes, or half of queue_size (in points, or in bytes counting
// the request uncompressed), so that a merged request fits in the queue
// unless one batch alone takes half of it; mu held.
func (m *merging) full() bool {
	if len(m.raw) >= mergeMaxBytes {
		return true
	}
	switch {
	case m.capacity <= 0:
		return false
	case m.sizer == exporterhelper.RequestSizerTypeBytes:
		return int64(len(m.raw)) >= m.capacity/2
	case m.sizer == exporterhelper.RequestSizerTypeItems:
		return int64(m.points) >= m.capacity/2
	default:
		return false
	}
}

// flushLocked compresses the pending request and puts it in the queue; mu
// held. The batches in it were accepted already, so a request the queue
// refuses (full without block_on_overflow, or stopping) is logged with its
// point count: those points are lost. end is true when merge_window (or
// Shutdown) ends the request, false when it reached its bound.
func (m *merging) flushLocked(ctx context.Context, end bool) {
	if len(m.raw) == 0 {
		return
	}
	m.timer.Stop()
	raw, points := m.raw, m.points
	m.peak = max(m.peak, len(raw))
	switch {
	case m.compression == "":
		m.raw = nil // raw goes to the request as it is
	case end:
		m.raw = nil // garbage once compressed
	default:
		m.raw = m.raw[:0] // for the next request of this scrape
	}
	m.points = 0
	if end {
		m.nextSize, m.peak = m.peak, 0
	}
	req, err := newRequest(m.compression, raw, points)
	if err == nil {
		err = m.Metrics.ConsumeMetrics(context.WithValue(ctx, preparedKey{}, req), pmetric.NewMetrics())
	}
	if err != nil {
		m.set.Logger.Error("otlp_durable: merged batches not queued; their points are lost",
			zap.Int("points", points), zap.Error(err))
	}
}

// flushAsync is merge_window's timer for the merged request gen; nothing
// is done when that one went to the queue already.
func (m *merging) flushAsync(gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen == m.gen {
		m.flushLocked(context.Background(), true)
	}
}

// Shutdown puts the pending request in the queue, then stops the queue (a
// persistent one keeps it for the next start).
func (m *merging) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.flushLocked(ctx, true)
	m.mu.Unlock()
	return m.Metrics.Shutdown(ctx)
}

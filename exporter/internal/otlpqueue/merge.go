// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

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

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
)

// mergeMaxBytes bounds a merged request: 2 MB of protobuf before
// compression, under half of the 4 MiB a gRPC server takes by default (the
// collector's OTLP receiver included). A batch larger than that goes alone,
// as it would without merge_window.
const mergeMaxBytes = 2_000_000

// merging is the exporter with merge_window: the batches that come within
// the window of the first are sent as one request, their protobuf encodings
// back to back (an ExportMetricsServiceRequest is its repeated
// resource_metrics field, so two encoded requests make one) in one
// compressed stream, each compressed as it comes (stream.go), and stored
// as one item of the queue. The bound suits both transports: a gRPC
// server's default 4 MiB message, the collector's OTLP/HTTP receiver's
// 20 MiB body and Prometheus' 32 MiB decoded OTLP request.
//
// A merged request goes to the queue with the context of the batch that
// filled it, or none when the window ended it: the other batches' client
// metadata and deadlines are not kept (the ernic receiver sets none).
//
// Why: the receiver hands on a batch per instance. Sent alone, each is a
// small request and an item of the queue on disk; joined by the batch
// processor, the whole scrape waits in it as pdata for the processor's
// timeout, most of what 16x64 held above an idle collector
// (docs/performance-memory.md). Encoded and compressed at once, a batch
// takes a fiftieth of its pdata's memory while it waits.
type merging struct {
	exporter.Metrics // the exporterhelper: queue, retries, push
	set              exporter.Settings
	name             string // the exporter's type, for logs and errors
	window           time.Duration
	// sizer and capacity of the sending queue (capacity 0: no queue), to
	// keep a merged request within half of it.
	sizer    exporterhelper.RequestSizerType
	capacity int64
	// compression is the configured compression's name ("": none).
	compression string
	// report logs a merged request that cannot be made; backlog is what
	// it says is queued.
	report  *deliveryreport.Report
	backlog *backlog

	// mu guards the fields below; it is held while a merged request is
	// put in the queue, so that requests enter it in order.
	mu      sync.Mutex
	pending *stream // the request being written; nil: none
	points  int     // in pending
	// last is the largest batch's encoding in the request before, what
	// the next one's zstd window is chosen by (zstdWindow) with its first
	// batch; lastRaw is the size of the request before, uncompressed, the
	// buffer an uncompressed one is made at.
	last, lastRaw int
	timer         *time.Timer
	// gen counts merged requests started, so that a timer of one that
	// was flushed already does nothing.
	gen uint64
}

// preparedKey carries a merged request through the exporterhelper to
// encode.
type preparedKey struct{}

// ConsumeMetrics encodes md and adds it to the pending request,
// compressed as it comes, which goes to the queue merge_window after its
// first batch, or at once when it reached its bound. A batch that would
// take the pending request past mergeMaxBytes starts the next one.
func (m *merging) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("%s: encoding the batch: %w", m.name, err))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending != nil && m.pending.raw+len(body) > mergeMaxBytes {
		m.flushLocked(ctx)
	}
	if m.pending == nil {
		s, err := openStream(m.compression, zstdWindow(max(len(body), m.last)), max(m.lastRaw, len(body)))
		if err != nil {
			return consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", m.name, m.compression, err))
		}
		m.pending = s
		m.gen++
		gen := m.gen
		m.timer = time.AfterFunc(m.window, func() { m.flushAsync(gen) })
	}
	if err := m.pending.write(body); err != nil {
		// Not seen with in-memory buffers; the request cannot be
		// finished: the batches in it are lost.
		m.set.Logger.Error(m.name+": compressing merged batches failed; their points are lost",
			zap.Int("points", m.points+md.DataPointCount()), zap.Error(err))
		m.timer.Stop()
		m.pending.abandon()
		m.pending, m.points = nil, 0
		return consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", m.name, m.compression, err))
	}
	m.points += md.DataPointCount()
	if m.full() {
		m.flushLocked(ctx)
	}
	return nil
}

// full reports whether the pending request reached its bound:
// mergeMaxBytes, or half of queue_size (in points, or in bytes counting
// the request uncompressed), so that a merged request fits in the queue
// unless one batch alone takes half of it; mu held.
func (m *merging) full() bool {
	raw := m.pending.raw
	if raw >= mergeMaxBytes {
		return true
	}
	switch {
	case m.capacity <= 0:
		return false
	case m.sizer == exporterhelper.RequestSizerTypeBytes:
		return int64(raw) >= m.capacity/2
	case m.sizer == exporterhelper.RequestSizerTypeItems:
		return int64(m.points) >= m.capacity/2
	default:
		return false
	}
}

// flushLocked ends the pending request and puts it in the queue; mu held.
// The batches in it were accepted already, so a request the queue refuses
// (full without block_on_overflow, or stopping) is logged with its point
// count: those points are lost.
func (m *merging) flushLocked(ctx context.Context) {
	if m.pending == nil {
		return
	}
	m.timer.Stop()
	s, points := m.pending, m.points
	m.pending, m.points = nil, 0
	m.last, m.lastRaw = s.largest, s.raw
	body, err := s.close()
	if err != nil {
		m.report.NotQueued(err, points, m.backlog.report())
		return
	}
	req := &Request{Body: body, Compression: m.compression, Points: points}
	// The batches in it were accepted already: a refusal is reported by
	// counting, and there is no caller to return it to.
	_ = m.Metrics.ConsumeMetrics(context.WithValue(ctx, preparedKey{}, req), pmetric.NewMetrics())
}

// flushAsync is merge_window's timer for the merged request gen; nothing
// is done when that one went to the queue already.
func (m *merging) flushAsync(gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen == m.gen {
		m.flushLocked(context.Background())
	}
}

// Shutdown puts the pending request in the queue, then stops the queue (a
// persistent one keeps it for the next start).
func (m *merging) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.flushLocked(ctx)
	m.mu.Unlock()
	return m.Metrics.Shutdown(ctx)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
)

// mergeMaxBytes bounds a merged request: 2 MB of protobuf before
// compression, under half of the 4 MiB a gRPC server takes by default (the
// collector's OTLP receiver included), well within an OTLP/HTTP receiver's
// 20 MiB and Prometheus' 32 MiB. A larger batch goes alone.
const mergeMaxBytes = 2_000_000

// With merge_window, the batches that come within the window of the first
// are one request: their protobuf encodings back to back (an
// ExportMetricsServiceRequest is its repeated resource_metrics field, so
// two encoded requests make one) in one compressed stream, each compressed
// as it comes (stream.go), a fiftieth of the batches' pdata while it
// waits. It goes to the queue with the context of the batch that filled
// it, or none when the window ended it: the others' client metadata and
// deadlines are not kept (the ernic receiver sets none).

// openMerged starts a merged request, its first batch body long: the zstd
// window and an uncompressed request's buffer are chosen by it and by the
// request before.
func (q *queued) openMerged(body int) (*stream, error) {
	s, err := openStream(q.s.Compression, zstdWindow(max(body, q.last)), max(q.lastRaw, body))
	if err != nil {
		return nil, consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", q.s.Name, q.s.Compression, err))
	}
	return s, nil
}

// merge encodes md and adds it to the pending request, compressed as it
// comes. A batch that would take the pending request past mergeMaxBytes
// starts the next one.
func (q *queued) merge(ctx context.Context, md pmetric.Metrics) error {
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("%s: encoding the batch: %w", q.s.Name, err))
	}
	points := md.DataPointCount()
	fits := func(s *stream) bool { return s.raw+len(body) <= mergeMaxBytes }
	open := func() (*stream, error) { return q.openMerged(len(body)) }
	return q.window.Add(ctx, open, fits, func(s *stream) (bool, error) {
		if err := s.write(body); err != nil {
			// Not seen with in-memory buffers; the request cannot be
			// finished: the batches in it are lost.
			q.report.NotQueued(err, s.points+points, q.sender.Backlog())
			s.abandon()
			return false, consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", q.s.Name, q.s.Compression, err))
		}
		s.points += points
		return q.full(s), nil
	})
}

// full reports whether the pending request reached its bound:
// mergeMaxBytes, or half of queue_size (in points, or in bytes counting
// the request uncompressed), so that a merged request fits in the queue
// unless one batch alone takes half of it.
func (q *queued) full(s *stream) bool {
	if s.raw >= mergeMaxBytes {
		return true
	}
	if !q.s.Queue.HasValue() || q.s.Queue.Get().QueueSize <= 0 {
		return false
	}
	capacity := q.s.Queue.Get().QueueSize
	switch q.s.Queue.Get().Sizer {
	case exporterhelper.RequestSizerTypeBytes:
		return int64(s.raw) >= capacity/2
	case exporterhelper.RequestSizerTypeItems:
		return int64(s.points) >= capacity/2
	default:
		return false
	}
}

// flushMerged ends the pending request and puts it in the queue. The
// batches in it were accepted already, so a refusal is reported with its
// point count: those points are lost.
func (q *queued) flushMerged(ctx context.Context, s *stream) error {
	q.last, q.lastRaw = s.largest, s.raw
	points := s.points
	body, err := s.close()
	if err == nil {
		err = q.sender.Enqueue(ctx, q.Metrics, &Request{Body: body, Compression: q.s.Compression, Points: points, id: pushqueue.NewID()})
	}
	if err != nil {
		q.report.NotQueued(err, points, q.sender.Backlog())
	}
	return err
}

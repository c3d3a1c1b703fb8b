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

// mergeMaxBytes is under half of the 4 MiB a gRPC server takes by default.
const mergeMaxBytes = 2_000_000

// Encoded ExportMetricsServiceRequests back to back are one (a repeated field).

// openMerged starts a merged request sized by its first batch and the last request.
func (q *queued) openMerged(body int) (*stream, error) {
	s, err := openStream(q.s.Compression, zstdWindow(max(body, q.last)), max(q.lastRaw, body))
	if err != nil {
		return nil, consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", q.s.Name, q.s.Compression, err))
	}
	return s, nil
}

// merge adds md to the pending request, or starts the next past mergeMaxBytes.
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
			// The request cannot be finished: its batches are lost.
			q.report.NotQueued(err, s.points+points, q.sender.Backlog())
			s.abandon()
			return false, consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", q.s.Name, q.s.Compression, err))
		}
		s.points += points
		return q.full(s), nil
	})
}

// full stops at mergeMaxBytes or half of queue_size, so the request fits in the queue.
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

// flushMerged queues the request; a refusal loses batches already accepted.
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
)

// mergeMaxBytes is under half of the 4 MiB a gRPC server takes by default.
const mergeMaxBytes = 2_000_000

// Encoded ExportMetricsServiceRequests back to back are one (a repeated field).

// merger writes the batches that come within merge_window into one
// compressed request.
type merger struct {
	name, compression string
	report            *deliveryreport.Report
	sender            *pushqueue.Sender[*Request]
	enqueue           func(context.Context, *Request) error
	window            *pushqueue.Window[*stream]
	// last and lastRaw size the next request; guarded by window's lock.
	last, lastRaw int
}

// open starts a merged request sized by its first batch and the last request.
func (q *merger) open(body int) (*stream, error) {
	s, err := openStream(q.compression, zstdWindow(max(body, q.last)), max(q.lastRaw, body))
	if err != nil {
		return nil, consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", q.name, q.compression, err))
	}
	return s, nil
}

// merge adds md to the pending request, or starts the next past mergeMaxBytes.
func (q *merger) merge(ctx context.Context, md pmetric.Metrics) error {
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("%s: encoding the batch: %w", q.name, err))
	}
	points := md.DataPointCount()
	fits := func(s *stream) bool { return s.raw+len(body) <= mergeMaxBytes }
	open := func() (*stream, error) { return q.open(len(body)) }
	return q.window.Add(ctx, open, fits, func(s *stream) (bool, error) {
		if err := s.write(body); err != nil {
			// The request cannot be finished: its batches are lost.
			q.report.NotQueued(err, s.points+points, q.sender.Backlog())
			s.abandon()
			return false, consumererror.NewPermanent(fmt.Errorf("%s: compressing the batch (%s): %w", q.name, q.compression, err))
		}
		s.points += points
		return q.full(s), nil
	})
}

// full stops at mergeMaxBytes or half of queue_size, so the request fits in the queue.
func (q *merger) full(s *stream) bool {
	if s.raw >= mergeMaxBytes {
		return true
	}
	items, bytes := q.sender.HalfQueue()
	return (bytes > 0 && int64(s.raw) >= bytes) || (items > 0 && int64(s.points) >= items)
}

// flushMerged queues the request; a refusal loses batches already accepted.
func (q *merger) flush(ctx context.Context, s *stream) error {
	q.last, q.lastRaw = s.largest, s.raw
	points := s.points
	body, err := s.close()
	if err == nil {
		err = q.enqueue(ctx, &Request{Body: body, Compression: q.compression, Points: points, id: pushqueue.NewID()})
	}
	if err != nil {
		q.report.NotQueued(err, points, q.sender.Backlog())
	}
	return err
}

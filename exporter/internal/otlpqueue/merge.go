// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
)

// mergeMaxBytes is under half of the 4 MiB a gRPC server takes by default.
const mergeMaxBytes = 2_000_000

// Encoded ExportMetricsServiceRequests back to back are one (a repeated
// field): the batches of a merge window are written into one compressed
// request as they come.

// item is a merged request being written; s is nil until its first batch.
type item struct{ s *stream }

// builder is pushqueue's ItemBuilder for OTLP.
type builder struct {
	name, compression string
	bound             func() (items, bytes int64)
	// last and lastRaw size the next request; guarded by the window's lock.
	last, lastRaw int
}

func (b *builder) Begin() (*item, error) { return &item{}, nil }

// Write adds md to it, queuing what it holds first past mergeMaxBytes.
func (b *builder) Write(it *item, md pmetric.Metrics, spill func(*Request)) (bool, error) {
	points := md.DataPointCount()
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		return false, &pushqueue.LostError{Points: points, Err: fmt.Errorf("%s: encoding the batch: %w", b.name, err)}
	}
	if it.s != nil && it.s.raw+len(body) > mergeMaxBytes {
		r, ok, err := b.End(it)
		if err != nil {
			return false, err
		}
		if ok {
			spill(r)
		}
	}
	if it.s == nil {
		s, err := openStream(b.compression, zstdWindow(max(len(body), b.last)), max(b.lastRaw, len(body)))
		if err != nil {
			return false, &pushqueue.LostError{Points: points, Err: fmt.Errorf("%s: compressing the batch (%s): %w", b.name, b.compression, err)}
		}
		it.s = s
	}
	if err := it.s.write(body); err != nil {
		lost := it.s.points + points
		it.s.abandon()
		it.s = nil
		return false, &pushqueue.LostError{Points: lost, Err: fmt.Errorf("%s: compressing the batch (%s): %w", b.name, b.compression, err)}
	}
	it.s.points += points
	return b.full(it.s), nil
}

// full stops at mergeMaxBytes or the queue's item bound.
func (b *builder) full(s *stream) bool {
	if s.raw >= mergeMaxBytes {
		return true
	}
	items, bytes := b.bound()
	return (bytes > 0 && int64(s.raw) >= bytes) || (items > 0 && int64(s.points) >= items)
}

// End closes the request it holds.
func (b *builder) End(it *item) (*Request, bool, error) {
	s := it.s
	if s == nil {
		return nil, false, nil
	}
	it.s = nil
	b.last, b.lastRaw = s.largest, s.raw
	body, err := s.close()
	if err != nil {
		return nil, false, &pushqueue.LostError{Points: s.points, Err: fmt.Errorf("%s: compressing the batch (%s): %w", b.name, b.compression, err)}
	}
	return &Request{Body: body, Compression: b.compression, Points: s.points, id: pushqueue.NewID()}, true, nil
}

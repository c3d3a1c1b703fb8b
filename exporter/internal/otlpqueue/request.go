// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
)

// Request is one batch, or batches merged, as it sits in the sending
// queue: the ExportMetricsServiceRequest it was encoded to, ready to send.
type Request struct {
	// Body is the protobuf ExportMetricsServiceRequest, compressed with
	// Compression (compress.go).
	Body []byte
	// Compression is the compression's name (gzip, zstd, or a gRPC
	// compressor's), "" for none.
	Compression string
	// Points is the number of data points in Body.
	Points int
	// id is pushqueue.NewID's when the request was made; 0 when read
	// from a version-1 or version-2 entry.
	id uint64
}

// ID is when the request was made (pushqueue.NewID).
func (r *Request) ID() uint64 { return r.id }

var _ xexporterhelper.Request = (*Request)(nil)

// ItemsCount is the number of data points in the request.
func (r *Request) ItemsCount() int { return r.Points }

// BytesSize is the size of the encoded request, compressed: what the queue
// keeps and what is sent.
func (r *Request) BytesSize() int { return len(r.Body) }

// MergeSplit is called only by the queue's batcher, which the exporters'
// Validate rules out: it returns the request as it is.
func (r *Request) MergeSplit(_ context.Context, _ int, _ exporterhelper.RequestSizerType, r2 xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if r2 != nil {
		return nil, errors.New("requests are not merged by the queue (sending_queue::batch is not supported)")
	}
	return []xexporterhelper.Request{r}, nil
}

// Encoding stores a Request in the persistent queue: a version byte (3),
// the compression's name (unsigned varint length, then the name; empty for
// none), the point count and the ID (unsigned varints), then the request
// as it is. Version 2 has no ID; version 1, no compression field either
// (its requests are uncompressed).
type Encoding struct{}

const encodingVersion = 3

// Marshal returns what the queue stores for req.
func (Encoding) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(*Request)
	if !ok {
		return nil, fmt.Errorf("cannot store a %T", req)
	}
	buf := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(r.Compression)+len(r.Body))
	buf = append(buf, encodingVersion)
	buf = binary.AppendUvarint(buf, uint64(len(r.Compression)))
	buf = append(buf, r.Compression...)
	buf = binary.AppendUvarint(buf, uint64(r.Points))
	buf = binary.AppendUvarint(buf, r.id)
	return append(buf, r.Body...), nil
}

// Unmarshal reads back what Marshal stored, in this version or an earlier.
// The body is not decoded: it is sent as it is, and a server that cannot
// parse it refuses it (gRPC InvalidArgument, HTTP 400), dropping it.
func (Encoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	if len(b) == 0 || b[0] < 1 || b[0] > encodingVersion {
		return nil, nil, fmt.Errorf("stored request of %d bytes: unknown version", len(b))
	}
	r, rest := &Request{}, b[1:]
	if b[0] >= 2 {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, nil, fmt.Errorf("stored request of %d bytes: bad compression name", len(b))
		}
		r.Compression = string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("stored request of %d bytes: bad point count", len(b))
	}
	r.Points, rest = int(n), rest[k:]
	if b[0] >= 3 {
		if r.id, k = binary.Uvarint(rest); k <= 0 {
			return nil, nil, fmt.Errorf("stored request of %d bytes: bad id", len(b))
		}
		rest = rest[k:]
	}
	r.Body = rest
	return context.Background(), r, nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
)

// request is one batch as it sits in the sending queue: the
// ExportMetricsServiceRequest it was encoded to, ready to send.
type request struct {
	// body is the protobuf ExportMetricsServiceRequest, compressed with
	// compression (compress.go).
	body []byte
	// compression is the gRPC compressor's name, "" for none.
	compression string
	// points is the number of data points in body.
	points int
}

var _ xexporterhelper.Request = (*request)(nil)

// ItemsCount is the number of data points in the batch.
func (r *request) ItemsCount() int { return r.points }

// BytesSize is the size of the encoded request, compressed: what the queue
// keeps and what is sent.
func (r *request) BytesSize() int { return len(r.body) }

// MergeSplit is called only by the queue's batcher, which Validate rules
// out: it returns the request as it is.
func (r *request) MergeSplit(_ context.Context, _ int, _ exporterhelper.RequestSizerType, r2 xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if r2 != nil {
		return nil, errors.New("otlp_durable: requests are not merged (sending_queue::batch is not supported)")
	}
	return []xexporterhelper.Request{r}, nil
}

// encoding stores a request in the persistent queue: a version byte (2),
// the compression's name (unsigned varint length, then the name; empty for
// none), the point count (unsigned varint), then the request as it is.
// Version 1, what earlier versions stored, has no compression field: its
// requests are uncompressed.
type encoding struct{}

const encodingVersion = 2

// Marshal returns what the queue stores for req.
func (encoding) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(*request)
	if !ok {
		return nil, fmt.Errorf("otlp_durable: cannot store a %T", req)
	}
	buf := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(r.compression)+len(r.body))
	buf = append(buf, encodingVersion)
	buf = binary.AppendUvarint(buf, uint64(len(r.compression)))
	buf = append(buf, r.compression...)
	buf = binary.AppendUvarint(buf, uint64(r.points))
	return append(buf, r.body...), nil
}

// Unmarshal reads back what Marshal stored, in this version or version 1.
// The body is not decoded: it is sent as it is, and a server that cannot
// parse it answers InvalidArgument.
func (encoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	if len(b) == 0 || (b[0] != 1 && b[0] != encodingVersion) {
		return nil, nil, fmt.Errorf("otlp_durable: stored request of %d bytes: unknown version", len(b))
	}
	r, rest := &request{}, b[1:]
	if b[0] == encodingVersion {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, nil, fmt.Errorf("otlp_durable: stored request of %d bytes: bad compression name", len(b))
		}
		r.compression = string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("otlp_durable: stored request of %d bytes: bad point count", len(b))
	}
	r.points, r.body = int(n), rest[k:]
	return context.Background(), r, nil
}

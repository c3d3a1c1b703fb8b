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

// Request is an encoded, compressed ExportMetricsServiceRequest, ready to send.
type Request struct {
	// Body is compressed with Compression.
	Body []byte
	// Compression is "" for none.
	Compression string
	// Points counts the data points.
	Points int
	// id is 0 when read from a version-1 or version-2 entry.
	id uint64
}

// ID is when the request was made (pushqueue.NewID).
func (r *Request) ID() uint64 { return r.id }

var _ xexporterhelper.Request = (*Request)(nil)

// ItemsCount is the number of data points in the request.
func (r *Request) ItemsCount() int { return r.Points }

// BytesSize is the compressed size: what the queue keeps and what is sent.
func (r *Request) BytesSize() int { return len(r.Body) }

// MergeSplit returns r as it is: the queue's batcher is not supported.
func (r *Request) MergeSplit(_ context.Context, _ int, _ exporterhelper.RequestSizerType, r2 xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if r2 != nil {
		return nil, errors.New("requests are not merged by the queue (sending_queue::batch is not supported)")
	}
	return []xexporterhelper.Request{r}, nil
}

// Encoding stores a Request as: version byte (3), compression name (uvarint
// length, name), point count and ID (uvarints), body. Version 2 has no ID;
// version 1 no compression name either (uncompressed).
type Encoding struct{}

const encodingVersion = 3

// Marshal returns what the queue stores for r.
func (Encoding) Marshal(r *Request) ([]byte, error) {
	buf := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(r.Compression)+len(r.Body))
	buf = append(buf, encodingVersion)
	buf = binary.AppendUvarint(buf, uint64(len(r.Compression)))
	buf = append(buf, r.Compression...)
	buf = binary.AppendUvarint(buf, uint64(r.Points))
	buf = binary.AppendUvarint(buf, r.id)
	return append(buf, r.Body...), nil
}

// Unmarshal reads back what Marshal stored, in this version or an earlier.
// The body is not decoded: a server that cannot parse it refuses it.
func (Encoding) Unmarshal(b []byte) (*Request, error) {
	if len(b) == 0 || b[0] < 1 || b[0] > encodingVersion {
		return nil, fmt.Errorf("stored request of %d bytes: unknown version", len(b))
	}
	r, rest := &Request{}, b[1:]
	if b[0] >= 2 {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, fmt.Errorf("stored request of %d bytes: bad compression name", len(b))
		}
		r.Compression = string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("stored request of %d bytes: bad point count", len(b))
	}
	r.Points, rest = int(n), rest[k:]
	if b[0] >= 3 {
		if r.id, k = binary.Uvarint(rest); k <= 0 {
			return nil, fmt.Errorf("stored request of %d bytes: bad id", len(b))
		}
		rest = rest[k:]
	}
	r.Body = rest
	return r, nil
}

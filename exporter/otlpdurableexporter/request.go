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
	// body is the protobuf ExportMetricsServiceRequest, uncompressed
	// (gRPC compresses it as it is sent).
	body []byte
	// points is the number of data points in body.
	points int
}

var _ xexporterhelper.Request = (*request)(nil)

// ItemsCount is the number of data points in the batch.
func (r *request) ItemsCount() int { return r.points }

// BytesSize is the size of the encoded request, what the queue keeps.
func (r *request) BytesSize() int { return len(r.body) }

// MergeSplit is called only by the queue's batcher, which Validate rules
// out: it returns the request as it is.
func (r *request) MergeSplit(_ context.Context, _ int, _ exporterhelper.RequestSizerType, r2 xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if r2 != nil {
		return nil, errors.New("otlp_durable: requests are not merged (sending_queue::batch is not supported)")
	}
	return []xexporterhelper.Request{r}, nil
}

// encoding stores a request in the persistent queue: a version byte, the
// point count (unsigned varint), then the encoded request as it is.
type encoding struct{}

const encodingVersion = 1

// Marshal returns what the queue stores for req.
func (encoding) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(*request)
	if !ok {
		return nil, fmt.Errorf("otlp_durable: cannot store a %T", req)
	}
	buf := make([]byte, 0, 1+binary.MaxVarintLen64+len(r.body))
	buf = append(buf, encodingVersion)
	buf = binary.AppendUvarint(buf, uint64(r.points))
	return append(buf, r.body...), nil
}

// Unmarshal reads back what Marshal stored. The body is not decoded: it is
// sent as it is, and a server that cannot parse it answers InvalidArgument.
func (encoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	if len(b) == 0 || b[0] != encodingVersion {
		return nil, nil, fmt.Errorf("otlp_durable: stored request of %d bytes: unknown version", len(b))
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("otlp_durable: stored request of %d bytes: bad point count", len(b))
	}
	return context.Background(), &request{body: b[1+k:], points: int(n)}, nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
)

// backlog counts what this process put in the queue and the sender has
// not finished, under the queue's sizer, for the delivery logs. Requests
// an earlier process left in a persistent queue are not in it.
type backlog struct {
	sizer    exporterhelper.RequestSizerType
	capacity int64
	size     atomic.Int64
}

func (b *backlog) sizeOf(r *Request) int64 {
	switch b.sizer {
	case exporterhelper.RequestSizerTypeBytes:
		return int64(r.BytesSize())
	case exporterhelper.RequestSizerTypeItems:
		return int64(r.ItemsCount())
	default:
		return 1
	}
}

func (b *backlog) report() deliveryreport.Backlog {
	return deliveryreport.Backlog{Size: max(b.size.Load(), 0), Sizer: b.sizer.String(), Capacity: b.capacity}
}

// offered is what encode made of a ConsumeMetrics call, so that the
// caller can count it once the queue took it.
type offered struct{ req *Request }

type offeredKey struct{}

// counting is the exporterhelper with the backlog's accounting: a request
// the queue took is added, one it refused (a full disk, a full queue) is
// reported as lost.
type counting struct {
	exporter.Metrics // the exporterhelper
	backlog          *backlog
	report           *deliveryreport.Report
}

func (c *counting) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	o := &offered{}
	err := c.Metrics.ConsumeMetrics(context.WithValue(ctx, offeredKey{}, o), md)
	switch {
	case o.req == nil:
	case err == nil:
		c.backlog.size.Add(c.backlog.sizeOf(o.req))
	default:
		c.report.NotQueued(err, o.req.ItemsCount(), c.backlog.report())
	}
	return err
}

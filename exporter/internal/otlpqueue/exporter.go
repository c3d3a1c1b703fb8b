// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
)

// Settings are what an exporter built on this package configures.
type Settings struct {
	// Name begins the errors and logs.
	Name string
	// Endpoint is as the logs show it (no password).
	Endpoint string
	// Compression is "" (none), Gzip, Zstd or a gRPC compressor's name.
	Compression string
	// MergeWindow of 0 sends each batch alone.
	MergeWindow time.Duration
	// Queue's batcher is not supported.
	Queue configoptional.Optional[exporterhelper.QueueBatchConfig]
	// Retry is done by pushqueue's Sender.
	Retry configretry.BackOffConfig
	// Timeout bounds each attempt (0: Push's client bounds it).
	Timeout time.Duration
	// Push sends a request as stored; errors as pushqueue.SenderSettings.Send.
	Push func(context.Context, *Request) error
}

// queued encodes (and merges) batches before exporterhelper's queue.
type queued struct {
	exporter.Metrics // exporterhelper: the queue, start, shutdown, telemetry
	s                Settings
	report           *deliveryreport.Report
	sender           *pushqueue.Sender[*Request]
	// merger is nil without merge_window.
	merger *merger
}

// NewMetrics returns the exporter: exporterhelper's queue of Requests, sent by pushqueue's Sender.
func NewMetrics(ctx context.Context, set exporter.Settings, s Settings, opts ...exporterhelper.Option) (exporter.Metrics, error) {
	if !Supported(s.Compression) {
		return nil, fmt.Errorf("%s: no compressor %q", s.Name, s.Compression)
	}
	q := &queued{s: s, report: deliveryreport.New(set.Logger, s.Name, s.Endpoint)}
	ss := pushqueue.SenderSettings[*Request]{Name: s.Name, Report: q.report, Retry: s.Retry, Send: q.send}
	if s.Queue.HasValue() {
		ss.Sizer, ss.Capacity = s.Queue.Get().Sizer, s.Queue.Get().QueueSize
	}
	q.sender = pushqueue.NewSender(ss)
	opts = append([]exporterhelper.Option{
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// Timeout per attempt and retries are the Sender's (send).
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{}),
		exporterhelper.WithRetry(pushqueue.ShutdownRetry),
		xexporterhelper.WithQueueBatch(s.Queue, xexporterhelper.QueueBatchSettings{Encoding: Encoding{}}),
	}, opts...)
	// report sums up exporterhelper's lines; one a minute per message is enough.
	hset := set
	hset.Logger = deliveryreport.Sampled(set.Logger)
	inner, err := xexporterhelper.NewMetricsRequest(ctx, hset, q.convert, q.push, opts...)
	if err != nil {
		return nil, err
	}
	q.Metrics = inner
	if s.MergeWindow > 0 {
		q.merger = &merger{name: s.Name, compression: s.Compression, report: q.report, sender: q.sender, enqueue: q.enqueue}
		q.merger.window = pushqueue.NewWindow(s.MergeWindow, q.merger.flush)
	}
	return q, nil
}

// ConsumeMetrics encodes md into the queue or the pending merged request.
func (q *queued) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if q.merger != nil {
		return q.merger.merge(ctx, md)
	}
	r, err := Encode(md, q.s.Compression)
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("%s: %w", q.s.Name, err))
	}
	if err := q.enqueue(ctx, r); err != nil {
		q.report.NotQueued(err, r.Points, q.sender.Backlog())
		return err
	}
	return nil
}

// enqueue puts r in the queue.
func (q *queued) enqueue(ctx context.Context, r *Request) error {
	return q.sender.Enqueue(ctx, q.Metrics, r)
}

// Shutdown queues the pending merged request and ends retries before stopping the queue.
func (q *queued) Shutdown(ctx context.Context) error {
	if q.merger != nil {
		_ = q.merger.window.Flush(ctx) // a refusal is reported as lost
	}
	q.sender.Stop()
	return q.Metrics.Shutdown(ctx)
}

// convert hands the queue the Request ConsumeMetrics made, or encodes md.
func (q *queued) convert(ctx context.Context, md pmetric.Metrics) (xexporterhelper.Request, error) {
	if r, ok := pushqueue.Prepared[*Request](ctx); ok {
		return r, nil
	}
	r, err := Encode(md, q.s.Compression)
	if err != nil {
		return nil, consumererror.NewPermanent(fmt.Errorf("%s: %w", q.s.Name, err))
	}
	return r, nil
}

// push delivers a request from the queue, with the Sender's retries.
func (q *queued) push(ctx context.Context, req xexporterhelper.Request) error {
	r, ok := req.(*Request)
	if !ok {
		return consumererror.NewPermanent(fmt.Errorf("%s: cannot send a %T", q.s.Name, req))
	}
	return q.sender.Deliver(ctx, r)
}

// send is one attempt, within Timeout, and its report.
func (q *queued) send(ctx context.Context, r *Request) error {
	if q.s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.s.Timeout)
		defer cancel()
	}
	err := q.s.Push(ctx, r)
	switch {
	case err == nil:
		q.report.Delivered(r.Points, q.sender.Backlog())
	case consumererror.IsPermanent(err):
		q.report.Rejected(deliveryreport.Cause(err), err, r.Points, q.sender.Backlog())
	}
	return err
}

// Encode returns md's ExportMetricsServiceRequest compressed, as the queue holds it.
func Encode(md pmetric.Metrics, compression string) (*Request, error) {
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		return nil, fmt.Errorf("encoding the batch: %w", err)
	}
	if compression != "" {
		if body, err = Compress(compression, body); err != nil {
			return nil, fmt.Errorf("compressing the batch (%s): %w", compression, err)
		}
	}
	return &Request{Body: body, Compression: compression, Points: md.DataPointCount(), id: pushqueue.NewID()}, nil
}

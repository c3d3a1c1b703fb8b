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
	// Name is the exporter's type, what its errors and logs begin with
	// ("otlp_durable").
	Name string
	// Endpoint is where it sends, as its logs show it (no password).
	Endpoint string
	// Compression is what requests are compressed with as they enter the
	// queue: "" (none), Gzip, Zstd, or a compressor registered with gRPC
	// (see Supported).
	Compression string
	// MergeWindow, when positive, joins the batches that come within it of
	// the first into one request (merge.go); 0 sends each batch alone.
	MergeWindow time.Duration
	// Queue is the sending queue (its batcher unsupported; the exporter's
	// Validate rules it out).
	Queue configoptional.Optional[exporterhelper.QueueBatchConfig]
	// Retry is retry_on_failure, done by pushqueue's Sender.
	Retry configretry.BackOffConfig
	// Timeout bounds each attempt (0: Push's client bounds it).
	Timeout time.Duration
	// Push sends one request as stored: nil, a permanent error
	// (consumererror.NewPermanent: dropped), one to retry after a while
	// (pushqueue.NewRetryAfter), or one to retry.
	Push func(context.Context, *Request) error
}

// queued is the exporter: batches encoded (and merged) before
// exporterhelper's queue, sent from it by pushqueue's Sender.
type queued struct {
	exporter.Metrics // exporterhelper: the queue, start, shutdown, telemetry
	s                Settings
	report           *deliveryreport.Report
	sender           *pushqueue.Sender[*Request]
	// window joins batches (merge.go); nil without merge_window.
	window *pushqueue.Window[*stream]
	// last is the largest batch's encoding in the merged request before,
	// what the next one's zstd window is chosen by (zstdWindow) with its
	// first batch; lastRaw is that request's size, uncompressed, the
	// buffer an uncompressed one is made at. Guarded by window's lock.
	last, lastRaw int
}

// NewMetrics returns the exporter: exporterhelper's queue holding Requests
// encoded by this package, pushqueue's Sender sending and retrying them,
// options (start, shutdown, telemetry attributes) added, and merge_window
// in front when s.MergeWindow is positive. An error when s.Compression is
// not Supported or exporterhelper refuses the options.
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
	// exporterhelper's lines (a refused batch, a retry) once a minute per
	// message: report sums them up.
	hset := set
	hset.Logger = deliveryreport.Sampled(set.Logger)
	inner, err := xexporterhelper.NewMetricsRequest(ctx, hset, q.convert, q.push, opts...)
	if err != nil {
		return nil, err
	}
	q.Metrics = inner
	if s.MergeWindow > 0 {
		q.window = pushqueue.NewWindow(s.MergeWindow, q.flushMerged)
	}
	return q, nil
}

// ConsumeMetrics encodes md and puts it in the queue, or, with
// merge_window, into the pending request (merge.go).
func (q *queued) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if q.window != nil {
		return q.merge(ctx, md)
	}
	r, err := Encode(md, q.s.Compression)
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("%s: %w", q.s.Name, err))
	}
	if err := q.sender.Enqueue(ctx, q.Metrics, r); err != nil {
		q.report.NotQueued(err, r.Points, q.sender.Backlog())
		return err
	}
	return nil
}

// Shutdown puts the pending merged request in the queue, ends retries (a
// request being retried stays in a persistent queue), then stops the queue.
func (q *queued) Shutdown(ctx context.Context) error {
	if q.window != nil {
		_ = q.window.Flush(ctx) // a refusal is reported as lost
	}
	q.sender.Stop()
	return q.Metrics.Shutdown(ctx)
}

// convert hands the queue the Request ConsumeMetrics made; a batch that
// comes without one (not from this package) is encoded here.
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

// Encode returns md's ExportMetricsServiceRequest compressed with
// compression, as the queue holds it. An error when md does not encode or
// compression is not Supported.
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

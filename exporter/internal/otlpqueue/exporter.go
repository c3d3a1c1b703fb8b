// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
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
	// Push sends one request as stored; its error is classified as the
	// exporterhelper's: nil, permanent (consumererror.NewPermanent), a
	// throttled retry (exporterhelper.NewThrottleRetry) or retryable.
	Push func(context.Context, *Request) error
}

// NewMetrics returns the exporter: the collector's exporterhelper with
// the queue holding Requests encoded by this package, options (timeout,
// retry, start, shutdown, telemetry attributes) added, and merging in
// front when s.MergeWindow is positive. An error when s.Compression is not
// Supported or the exporterhelper refuses the options.
func NewMetrics(ctx context.Context, set exporter.Settings, s Settings, opts ...exporterhelper.Option) (exporter.Metrics, error) {
	if !Supported(s.Compression) {
		return nil, fmt.Errorf("%s: no compressor %q", s.Name, s.Compression)
	}
	enc := encoder{name: s.Name, compression: s.Compression}
	report := deliveryreport.New(set.Logger, s.Name, s.Endpoint)
	b := &backlog{}
	if s.Queue.HasValue() {
		b.sizer, b.capacity = s.Queue.Get().Sizer, s.Queue.Get().QueueSize
	}
	push := func(ctx context.Context, req xexporterhelper.Request) error {
		r, ok := req.(*Request)
		if !ok {
			return consumererror.NewPermanent(fmt.Errorf("%s: cannot send a %T", s.Name, req))
		}
		err := s.Push(ctx, r)
		switch {
		case err == nil:
			report.Delivered(r.Points, b.report())
		case consumererror.IsPermanent(err):
			report.Rejected(deliveryreport.Cause(err), err, r.Points, b.report())
		default:
			// exporterhelper retries it, after a wait it does not tell.
			report.Failed(deliveryreport.Cause(err), err, 0, b.report())
			return err
		}
		b.size.Add(-b.sizeOf(r))
		report.Settled(b.report())
		return err
	}
	opts = append([]exporterhelper.Option{
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		xexporterhelper.WithQueueBatch(s.Queue, xexporterhelper.QueueBatchSettings{Encoding: Encoding{}}),
	}, opts...)
	// exporterhelper's lines (a refused batch, a retry) once a minute per
	// message: report sums them up.
	hset := set
	hset.Logger = deliveryreport.Sampled(set.Logger)
	inner, err := xexporterhelper.NewMetricsRequest(ctx, hset, enc.encode, push, opts...)
	if err != nil {
		return nil, err
	}
	c := &counting{Metrics: inner, backlog: b, report: report}
	if s.MergeWindow <= 0 {
		return c, nil
	}
	m := &merging{Metrics: c, set: set, name: s.Name, window: s.MergeWindow, compression: s.Compression, report: report, backlog: b}
	if s.Queue.HasValue() {
		m.sizer, m.capacity = s.Queue.Get().Sizer, s.Queue.Get().QueueSize
	}
	return m, nil
}

// encoder makes the queue's Requests.
type encoder struct {
	name        string // the exporter's, for errors
	compression string
}

// encode turns a batch into its ExportMetricsServiceRequest, compressed
// with the configured compression, once; a request merged by merging
// comes ready in the context.
func (e encoder) encode(ctx context.Context, md pmetric.Metrics) (xexporterhelper.Request, error) {
	r, ok := ctx.Value(preparedKey{}).(*Request)
	if !ok {
		var err error
		if r, err = Encode(md, e.compression); err != nil {
			return nil, consumererror.NewPermanent(fmt.Errorf("%s: %w", e.name, err))
		}
	}
	if o, ok := ctx.Value(offeredKey{}).(*offered); ok {
		o.req = r
	}
	return r, nil
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
	return &Request{Body: body, Compression: compression, Points: md.DataPointCount()}, nil
}

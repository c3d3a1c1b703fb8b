// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"
)

// remoteWrite translates batches into the queue and sends them from it in order.
type remoteWrite struct {
	cfg    *Config
	set    exporter.Settings
	tr     *translator
	inner  exporter.Metrics
	writer *writer
	report *deliveryreport.Report

	sender *pushqueue.Sender[*request]
	// merger is nil without merge_window.
	merger *merger

	moved *movedBatches
}

func newExporter(ctx context.Context, set exporter.Settings, cfg *Config) (*remoteWrite, error) {
	e := &remoteWrite{
		cfg:    cfg,
		set:    set,
		tr:     newTranslator(cfg),
		report: deliveryreport.New(set.Logger, "Remote write", cfg.Endpoint),
		moved:  &movedBatches{},
	}
	ss := pushqueue.SenderSettings[*request]{
		Name: "remote_write", Report: e.report, Retry: cfg.BackOffConfig,
		Send: func(ctx context.Context, r *request) error { return e.writer.send(ctx, r) }, Cause: sendCause,
	}
	if cfg.QueueConfig.HasValue() {
		ss.Sizer, ss.Capacity = cfg.QueueConfig.Get().Sizer, cfg.QueueConfig.Get().QueueSize
	}
	e.sender = pushqueue.NewSender(ss)
	e.writer = &writer{
		endpoint: cfg.Endpoint, retryOnAuth: cfg.RetryOnAuthErrors,
		userAgent: fmt.Sprintf("%s/%s", set.BuildInfo.Command, set.BuildInfo.Version),
		logger:    set.Logger, report: e.report, backlog: e.sender.Backlog, stopping: e.sender.Stopping(), proto: &e.tr.proto,
	}
	if cfg.MergeWindow > 0 {
		e.merger = &merger{tr: e.tr, sender: e.sender, report: e.report, enqueue: e.enqueue}
		e.merger.window = pushqueue.NewWindow(cfg.MergeWindow, e.merger.flush)
	}
	inner, err := e.newQueue(ctx, cfg.QueueConfig)
	if err != nil {
		return nil, err
	}
	e.inner = inner
	return e, nil
}

func (e *remoteWrite) newQueue(ctx context.Context, q configoptional.Optional[exporterhelper.QueueBatchConfig]) (exporter.Metrics, error) {
	// e.report sums up exporterhelper's lines; one a minute per message is enough.
	set := e.set
	set.Logger = deliveryreport.Sampled(set.Logger)
	return xexporterhelper.NewMetricsRequest(ctx, set, e.convert, e.push,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// The client's timeout bounds each attempt; the Sender retries.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{}),
		exporterhelper.WithRetry(pushqueue.ShutdownRetry),
		xexporterhelper.WithQueueBatch(q, xexporterhelper.QueueBatchSettings{Encoding: encoding{moved: e.moved}}),
	)
}

// Start creates the client and starts the queue; a persistent queue that
// cannot be opened is replaced by an in-memory one rather than failing the collector.
func (e *remoteWrite) Start(ctx context.Context, host component.Host) error {
	client, err := tlsreload.HTTPClient(ctx, e.cfg.ClientConfig, host, e.set.TelemetrySettings)
	if err != nil {
		return err
	}
	e.writer.client = client
	err = e.inner.Start(ctx, host)
	if err == nil || !e.cfg.QueueConfig.HasValue() || e.cfg.QueueConfig.Get().StorageID == nil {
		return err
	}
	q := *e.cfg.QueueConfig.Get()
	e.set.Logger.Error("remote_write: the persistent queue cannot be opened; sending through an in-memory queue of the same bound, which a restart loses. Mend the cause (e.g. the storage's directory is not writable) and restart to keep the queue on disk again",
		zap.String("storage", q.StorageID.String()), zap.Error(err))
	_ = e.inner.Shutdown(ctx)
	q.StorageID = nil
	mem, err := e.newQueue(ctx, configoptional.Some(q))
	if err != nil {
		return err
	}
	e.inner = mem
	return e.inner.Start(ctx, host)
}

// Shutdown queues what merge_window holds and ends retries before stopping the queue.
func (e *remoteWrite) Shutdown(ctx context.Context) error {
	if e.merger != nil {
		_ = e.merger.window.Flush(ctx) // a refusal is reported as lost
	}
	e.sender.Stop()
	return e.inner.Shutdown(ctx)
}

// Capabilities: the exporter does not change its data.
func (e *remoteWrite) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// convert hands the queue the request ConsumeMetrics translated.
func (e *remoteWrite) convert(ctx context.Context, md pmetric.Metrics) (xexporterhelper.Request, error) {
	if r, ok := pushqueue.Prepared[*request](ctx); ok {
		return r, nil
	}
	r, _ := e.tr.translate(md)
	return r, nil
}

// ConsumeMetrics translates md into the queue or the item being merged.
func (e *remoteWrite) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if e.merger != nil {
		return e.merger.merge(ctx, md)
	}
	req, err := e.tr.translate(md)
	reportUntranslated(e.report, err)
	if len(req.payloads) == 0 {
		return nil
	}
	if err := e.sender.TooLarge(req, "a batch"); err != nil {
		return err
	}
	return e.enqueue(ctx, req)
}

// enqueue puts req in the current queue.
func (e *remoteWrite) enqueue(ctx context.Context, req *request) error {
	return e.sender.Enqueue(ctx, e.inner, req)
}

// push sends a batch from the queue, after the older batches moved to its tail (movedBatches).
func (e *remoteWrite) push(ctx context.Context, r xexporterhelper.Request) error {
	req, ok := r.(*request)
	if !ok {
		return consumererror.NewPermanent(fmt.Errorf("remote_write: unexpected request %T", r))
	}
	for m := e.moved.next(); m != nil; m = e.moved.next() {
		if err := e.sender.Deliver(ctx, m); err != nil {
			return err // stopping: both stay in the persistent queue
		}
		e.moved.sent(m)
	}
	if e.moved.wasSent(req) {
		return nil
	}
	return e.sender.Deliver(ctx, req)
}

// sendCause is post's cause of a failure, for the logs.
func sendCause(err error) string {
	if se, ok := err.(*sendError); ok { //nolint:errorlint // post returns it unwrapped
		return se.cause
	}
	return deliveryreport.Cause(err)
}

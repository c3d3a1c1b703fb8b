// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
)

// remoteWrite is the exporter: a producer side (ConsumeMetrics: translate,
// merge, enqueue) and a sender side (push: send every payload of a batch in
// order), with pushqueue's Sender between them for retries and room.
type remoteWrite struct {
	cfg       *Config
	set       exporter.Settings
	tr        *translator
	inner     exporter.Metrics
	client    *http.Client
	userAgent string
	report    *deliveryreport.Report

	// sizer and capacity of the sending queue (capacity 0: no queue).
	sizer    exporterhelper.RequestSizerType
	capacity int64
	sender   *pushqueue.Sender[*request]
	// window holds the requests of merge_window (merge.go); nil without.
	window *pushqueue.Window[*batchState]

	// moved holds the batches a persistent queue put back at its tail on
	// start: they are the oldest and are sent first.
	moved *movedBatches
}

func newExporter(ctx context.Context, set exporter.Settings, cfg *Config) (*remoteWrite, error) {
	e := &remoteWrite{
		cfg:       cfg,
		set:       set,
		tr:        newTranslator(cfg),
		userAgent: fmt.Sprintf("%s/%s", set.BuildInfo.Command, set.BuildInfo.Version),
		report:    deliveryreport.New(set.Logger, "Remote write", cfg.Endpoint),
		moved:     &movedBatches{},
	}
	if cfg.QueueConfig.HasValue() {
		q := cfg.QueueConfig.Get()
		e.sizer, e.capacity = q.Sizer, q.QueueSize
	}
	e.sender = pushqueue.NewSender(pushqueue.SenderSettings[*request]{
		Name: "remote_write", Report: e.report, Retry: cfg.BackOffConfig,
		Sizer: e.sizer, Capacity: e.capacity, Send: e.sendFrom, Cause: sendCause,
	})
	if cfg.MergeWindow > 0 {
		e.window = pushqueue.NewWindow(cfg.MergeWindow, e.flushMerged)
	}
	inner, err := e.newQueue(ctx, cfg.QueueConfig)
	if err != nil {
		return nil, err
	}
	e.inner = inner
	return e, nil
}

// newQueue builds the exporterhelper around push with queue q.
func (e *remoteWrite) newQueue(ctx context.Context, q configoptional.Optional[exporterhelper.QueueBatchConfig]) (exporter.Metrics, error) {
	// exporterhelper's lines (a refused batch, a retry) once a minute per
	// message: e.report sums them up.
	set := e.set
	set.Logger = deliveryreport.Sampled(set.Logger)
	return xexporterhelper.NewMetricsRequest(ctx, set, e.convert, e.push,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// The client's timeout bounds each request; push retries itself.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{}),
		// push returns a retryable error only when the exporter stops:
		// the queue's retry sender then reports a shutdown, and a
		// persistent queue keeps the batch for the next start.
		exporterhelper.WithRetry(configretry.BackOffConfig{
			Enabled: true, InitialInterval: 100 * time.Millisecond, Multiplier: 2,
			MaxInterval: time.Second, RandomizationFactor: 0,
		}),
		xexporterhelper.WithQueueBatch(q, xexporterhelper.QueueBatchSettings{Encoding: encoding{moved: e.moved}}),
	)
}

// Start creates the HTTP client and starts the queue. A persistent queue
// whose storage cannot be opened does not keep the collector from
// starting: the exporter logs it and sends through an in-memory queue of
// the same bound, without persistence, until the cause is mended. (A
// damaged file does not get here: queue_storage sets it aside at start.)
func (e *remoteWrite) Start(ctx context.Context, host component.Host) error {
	client, err := e.cfg.ClientConfig.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
	if err != nil {
		return err
	}
	e.client = client
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

// Shutdown puts the batches merge_window holds in the queue, stops the
// retries, so that a batch being retried goes back to a persistent queue,
// then stops the queue.
func (e *remoteWrite) Shutdown(ctx context.Context) error {
	if e.window != nil {
		_ = e.window.Flush(ctx) // a refusal is reported as lost
	}
	e.sender.Stop()
	return e.inner.Shutdown(ctx)
}

// Capabilities: the exporter does not change the data it is given.
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

// ConsumeMetrics translates md into remote-write requests and puts them in
// the queue, or, with merge_window, writes them into the requests of the
// item being merged (merge.go).
func (e *remoteWrite) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if e.window != nil {
		return e.merge(ctx, md)
	}
	req, err := e.tr.translate(md)
	e.reportUntranslated(err)
	if len(req.payloads) == 0 {
		return nil
	}
	if err := e.sender.TooLarge(req, "a batch"); err != nil {
		return err
	}
	return e.sender.Enqueue(ctx, e.inner, req)
}

// push sends a batch from the queue: every payload not yet sent, in order.
// Batches that a persistent queue moved to its tail on start (see moved)
// are sent first, being the oldest.
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

// backlog is what this process has queued and not finished, for the logs.
func (e *remoteWrite) backlog() deliveryreport.Backlog { return e.sender.Backlog() }

// sendCause is the cause post gave a failure, for the logs.
func sendCause(err error) string {
	if se, ok := err.(*sendError); ok { //nolint:errorlint // post returns it unwrapped
		return se.cause
	}
	return deliveryreport.Cause(err)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
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
)

// remoteWrite is the exporter: a producer side (ConsumeMetrics: translate,
// make room in a full queue, enqueue) around exporterhelper's queue, and a
// sender side (push: send, retry, drop when asked).
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
	// queued is the size (under sizer) of the batches this process put
	// in the queue and that are not finished yet. Batches of an earlier
	// process (ids up to firstID) are not in it.
	queued  atomic.Int64
	firstID uint64
	// failing: the last attempt to send failed, so batches wait in the
	// queue; cleared by the next accepted request.
	failing atomic.Bool
	// drop carries a producer's request to drop the oldest batch; the
	// sender answers on the channel with the size it freed.
	drop chan chan int64

	// moved holds the batches a persistent queue put back at its tail on
	// start: they are the oldest and are sent first.
	moved *movedBatches
	// merger holds the requests of merge_window (merge.go).
	merger merger

	stop     chan struct{}
	stopOnce sync.Once
}

type requestKey struct{}

func newExporter(ctx context.Context, set exporter.Settings, cfg *Config) (*remoteWrite, error) {
	e := &remoteWrite{
		cfg:       cfg,
		set:       set,
		tr:        newTranslator(cfg),
		userAgent: fmt.Sprintf("%s/%s", set.BuildInfo.Command, set.BuildInfo.Version),
		report:    deliveryreport.New(set.Logger, "Remote write", cfg.Endpoint),
		drop:      make(chan chan int64),
		moved:     &movedBatches{},
		stop:      make(chan struct{}),
		firstID:   nextID(),
	}
	if cfg.QueueConfig.HasValue() {
		q := cfg.QueueConfig.Get()
		e.sizer, e.capacity = q.Sizer, q.QueueSize
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
	n, err := e.flushPending(ctx)
	if err != nil {
		e.set.Logger.Error("remote_write: merged batches not queued at shutdown; their samples are lost",
			zap.Int("samples", n), zap.Error(err))
	}
	e.stopOnce.Do(func() { close(e.stop) })
	return e.inner.Shutdown(ctx)
}

// Capabilities: the exporter does not change the data it is given.
func (e *remoteWrite) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// convert hands the queue the request ConsumeMetrics translated.
func (e *remoteWrite) convert(ctx context.Context, md pmetric.Metrics) (xexporterhelper.Request, error) {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		return r, nil
	}
	r, _ := e.tr.translate(md)
	return r, nil
}

// ConsumeMetrics translates md into remote-write requests and puts them in
// the queue, or, with merge_window, writes them into the requests of the
// item being merged (merge.go).
func (e *remoteWrite) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if e.cfg.MergeWindow > 0 {
		return e.merge(ctx, md)
	}
	req, err := e.tr.translate(md)
	e.reportUntranslated(err)
	if len(req.payloads) == 0 {
		return nil
	}
	if err := e.tooLarge(req, "a batch"); err != nil {
		return err
	}
	return e.enqueue(ctx, req)
}

// tooLarge returns a permanent error when req, named what in it, is larger
// than the whole queue: it would wait for room forever.
func (e *remoteWrite) tooLarge(req *request, what string) error {
	if size := req.size(e.sizer); e.capacity > 0 && size > e.capacity {
		return consumererror.NewPermanent(fmt.Errorf("remote_write: %s of %d (%s) is more than sending_queue::queue_size %d holds; raise it", what, size, e.sizer, e.capacity))
	}
	return nil
}

// enqueue puts req in the queue. When the queue is full while sending
// fails, it asks the sender to drop the oldest batch until req fits; when
// sending works, it waits for room (block_on_overflow).
func (e *remoteWrite) enqueue(ctx context.Context, req *request) error {
	size := req.size(e.sizer)
	if e.capacity > 0 {
		for need := e.queued.Load() + size - e.capacity; need > 0 && e.failing.Load(); {
			freed, ok := e.dropOldest(100 * time.Millisecond)
			if !ok {
				break
			}
			need -= freed
		}
	}
	done := make(chan error, 1)
	go func() {
		done <- e.inner.ConsumeMetrics(context.WithValue(ctx, requestKey{}, req), pmetric.NewMetrics())
	}()
	offered := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err == nil {
				e.queued.Add(size)
			}
			return err
		case now := <-tick.C:
			// Still waiting for room after the accounted room was
			// made: the queue also holds batches this process did not
			// count (left by an earlier process). Two seconds tell that
			// wait from a slow write of the batch.
			if e.capacity > 0 && e.failing.Load() && now.Sub(offered) > 2*time.Second {
				e.dropOldest(100 * time.Millisecond)
			}
		case <-e.stop:
			return errors.New("remote_write: stopping while the queue is full")
		}
	}
}

// dropOldest asks a sender waiting to retry to drop its batch, and returns
// the size it freed; false when no sender came to a wait within d (it is
// sending, or has nothing to send).
func (e *remoteWrite) dropOldest(d time.Duration) (int64, bool) {
	ack := make(chan int64, 1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case e.drop <- ack:
		return <-ack, true
	case <-t.C:
		return 0, false
	case <-e.stop:
		return 0, false
	}
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
		if err := e.deliver(ctx, m); err != nil {
			return err // stopping: both stay in the persistent queue
		}
		e.moved.sent(m)
	}
	if e.moved.wasSent(req) {
		return nil
	}
	return e.deliver(ctx, req)
}

// deliver sends req: a rejected payload is dropped and the rest goes on; a
// failed one is retried with backoff until it goes through,
// max_elapsed_time passes, a producer needs the room, or the exporter
// stops (the only error returned then, besides a permanent one when
// retries are off).
func (e *remoteWrite) deliver(ctx context.Context, req *request) error {
	var bo *backoff.ExponentialBackOff
	var first time.Time
	for {
		err := e.sendFrom(ctx, req)
		select {
		case <-e.stop:
			if err != nil {
				return err // stopping: the queue keeps or drains it
			}
		default:
		}
		if err == nil {
			e.failing.Store(false)
			e.finish(req)
			e.report.Settled(e.backlog())
			return nil
		}
		e.failing.Store(true)
		retry := e.cfg.BackOffConfig
		if !retry.Enabled {
			e.report.Failed(sendCause(err), err, 0, e.backlog())
			e.finish(req)
			return consumererror.NewPermanent(err)
		}
		if bo == nil {
			first = time.Now()
			bo = &backoff.ExponentialBackOff{
				InitialInterval: retry.InitialInterval, RandomizationFactor: retry.RandomizationFactor,
				Multiplier: retry.Multiplier, MaxInterval: retry.MaxInterval,
			}
			bo.Reset()
		}
		wait := bo.NextBackOff()
		if se := (*sendError)(nil); errors.As(err, &se) && se.retryAfter > wait {
			wait = se.retryAfter // the endpoint's Retry-After, when longer
		}
		if retry.MaxElapsedTime > 0 && time.Since(first)+wait > retry.MaxElapsedTime {
			e.report.Dropped("retried for max_elapsed_time", req.ItemsCount(), req.bytes, e.backlog())
			e.finish(req)
			return nil
		}
		e.report.Failed(sendCause(err), err, wait, e.backlog())
		if stop := e.wait(ctx, req, wait); stop != nil {
			if errors.Is(stop, errDropped) {
				return nil
			}
			return stop
		}
	}
}

var errDropped = errors.New("dropped to make room")

// wait sleeps before a retry. It returns nil to retry, errDropped when a
// producer took the batch's room (the batch is finished), or the error that
// stops the retries (shutdown, cancelled context).
func (e *remoteWrite) wait(ctx context.Context, req *request, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case ack := <-e.drop:
		e.report.Dropped("queue full", req.ItemsCount(), req.bytes, e.backlog())
		e.finish(req)
		ack <- req.size(e.sizer)
		return errDropped
	case <-e.stop:
		return errors.New("remote_write: stopped while retrying; the batch stays in a persistent queue")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish takes a batch out of this process's queue accounting.
func (e *remoteWrite) finish(req *request) {
	if req.id > e.firstID {
		e.queued.Add(-req.size(e.sizer))
	}
}

// backlog is what this process has queued and not finished, for the logs.
func (e *remoteWrite) backlog() deliveryreport.Backlog {
	return deliveryreport.Backlog{Size: max(e.queued.Load(), 0), Sizer: e.sizer.String(), Capacity: e.capacity}
}

// sendCause is the cause post gave a failure, for the logs.
func sendCause(err error) string {
	if se, ok := err.(*sendError); ok { //nolint:errorlint // post returns it unwrapped
		return se.cause
	}
	return deliveryreport.Cause(err)
}

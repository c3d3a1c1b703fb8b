// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"
	"fmt"
	"runtime"
	"sync"
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
	"github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"
)

// Settings are what a push exporter gives the core: its identity, its queue
// and retry settings, and its backend (encoding, send, answers).
type Settings[R Request] struct {
	Exporter exporter.Settings
	// Endpoint is as the logs show it (no password).
	Endpoint string
	Queue    configoptional.Optional[exporterhelper.QueueBatchConfig]
	Retry    configretry.BackOffConfig
	// Encoding stores R in a persistent queue.
	Encoding Encoding[R]
	// Encode makes the request of one batch; false when it holds no point.
	Encode func(pmetric.Metrics) (R, bool, error)
	// MergeWindow > 0 joins batches with the Merger that NewMerger makes.
	MergeWindow time.Duration
	NewMerger   func(*Exporter[R]) Merger
	// Send makes one attempt; a permanent error rejects r, any other is
	// retried. It may count r's parts itself (Tally).
	Send func(context.Context, R, *Tally) error
	// Cause names a failure for the logs and the `reason` label (deliveryreport.Cause if nil).
	Cause func(error) string
	// Start and Shutdown make and close the backend's client.
	Start    func(context.Context, component.Host) error
	Shutdown func(context.Context) error
	// Options add to exporterhelper's (telemetry attributes).
	Options []exporterhelper.Option
}

// Merger joins batches into queue items (NewMerging).
type Merger interface {
	Merge(context.Context, pmetric.Metrics) error
	Flush(context.Context) error
}

// Exporter is a push exporter: batches made into requests before
// exporterhelper's sending queue, kept there (on disk with a storage), and
// sent by a Sender in order.
type Exporter[R Request] struct {
	s          Settings[R]
	name       string
	inner      exporter.Metrics
	sender     *Sender[R]
	stats      *stats
	queue      *backlog
	encoding   queueEncoding[R]
	merger     Merger
	unregister func()
	stopped    sync.Once
}

// New returns the exporter of s.
func New[R Request](ctx context.Context, s Settings[R]) (*Exporter[R], error) {
	name := s.Exporter.ID.Type().String()
	if s.Cause == nil {
		s.Cause = deliveryreport.Cause
	}
	e := &Exporter[R]{s: s, name: name, queue: &backlog{}}
	if s.Queue.HasValue() {
		e.queue.sizer, e.queue.capacity = s.Queue.Get().Sizer, s.Queue.Get().QueueSize
	}
	e.stats = newStats(s.Exporter.ID.String(), deliveryreport.New(s.Exporter.Logger, name, s.Endpoint), e.queue)
	e.sender = &Sender[R]{
		name: name, retry: s.Retry, send: s.Send, cause: s.Cause, stats: e.stats, queue: e.queue,
		drop: make(chan chan int64), stop: make(chan struct{}),
	}
	e.encoding = queueEncoding[R]{enc: s.Encoding, unreadable: func(err error) {
		e.stats.droppedFor(deliverystats.ReasonUnreadable, 0, 0)
		s.Exporter.Logger.Error(name+": a stored batch cannot be read; the queue drops it", zap.Error(err))
	}}
	inner, err := e.newInner(ctx, s.Queue)
	if err != nil {
		return nil, err
	}
	e.inner = inner
	if s.MergeWindow > 0 && s.NewMerger != nil {
		e.merger = s.NewMerger(e)
	}
	return e, nil
}

func (e *Exporter[R]) newInner(ctx context.Context, q configoptional.Optional[exporterhelper.QueueBatchConfig]) (exporter.Metrics, error) {
	// The report sums up exporterhelper's lines; one a minute per message is enough.
	set := e.s.Exporter
	set.Logger = deliveryreport.Sampled(set.Logger)
	opts := append([]exporterhelper.Option{
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// Timeout per attempt and retries are the Sender's.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{}),
		exporterhelper.WithRetry(ShutdownRetry),
		xexporterhelper.WithQueueBatch(q, xexporterhelper.QueueBatchSettings{Encoding: e.encoding}),
	}, e.s.Options...)
	return xexporterhelper.NewMetricsRequest(ctx, set, e.convert, e.push, opts...)
}

// Start makes the client and starts the queue. A persistent queue that
// cannot be opened is replaced by an in-memory one of the same bound
// rather than failing the collector (a restart loop would lose more).
func (e *Exporter[R]) Start(ctx context.Context, host component.Host) error {
	if e.s.Start != nil {
		if err := e.s.Start(ctx, host); err != nil {
			return err
		}
	}
	e.unregister = deliverystats.Register(e.stats.snapshot)
	if !e.s.Queue.HasValue() || e.s.Queue.Get().StorageID == nil {
		return e.inner.Start(ctx, host)
	}
	q := *e.s.Queue.Get()
	e.queue.usePersistent(true)
	e.sender.persistent.Store(true)
	err := e.inner.Start(ctx, observedHost{Host: host, storageID: *q.StorageID, backlog: e.queue})
	if err == nil {
		return nil
	}
	e.s.Exporter.Logger.Error(e.name+": the persistent queue cannot be opened; sending through an in-memory queue of the same bound, which a restart loses. Mend the cause (e.g. the storage's directory is not writable) and restart to keep the queue on disk again",
		zap.String("storage", q.StorageID.String()), zap.Error(err))
	_ = e.inner.Shutdown(ctx)
	e.queue.usePersistent(false)
	e.sender.persistent.Store(false)
	q.StorageID = nil
	mem, err := e.newInner(ctx, configoptional.Some(q))
	if err != nil {
		return err
	}
	e.inner = mem
	return e.inner.Start(ctx, host)
}

// Shutdown queues what merge_window holds and ends retries before stopping the queue.
func (e *Exporter[R]) Shutdown(ctx context.Context) (err error) {
	e.stopped.Do(func() { err = e.shutdown(ctx) })
	return err
}

func (e *Exporter[R]) shutdown(ctx context.Context) error {
	if e.merger != nil {
		_ = e.merger.Flush(ctx) // a refusal is counted as lost
	}
	e.sender.Stop()
	err := e.inner.Shutdown(ctx)
	if e.unregister != nil {
		e.unregister()
	}
	if e.s.Shutdown != nil {
		if serr := e.s.Shutdown(ctx); err == nil {
			err = serr
		}
	}
	return err
}

// Capabilities: the exporter does not change its data.
func (e *Exporter[R]) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeMetrics makes md a request into the queue, or adds it to the merged one.
func (e *Exporter[R]) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if e.merger != nil {
		return e.merger.Merge(ctx, md)
	}
	r, ok, err := e.s.Encode(md)
	if err != nil {
		e.stats.untranslatable(err, md.DataPointCount())
		return consumererror.NewPermanent(fmt.Errorf("%s: %w", e.name, err))
	}
	if !ok {
		return nil
	}
	return e.Enqueue(ctx, r)
}

// Enqueue puts r in the queue, by the drop-oldest policy (Sender.Enqueue).
func (e *Exporter[R]) Enqueue(ctx context.Context, r R) error {
	return e.sender.Enqueue(ctx, e.inner, r)
}

// Bound is the largest queue item, in items or bytes (0: none).
func (e *Exporter[R]) Bound() (items, bytes int64) { return e.sender.bound() }

// Untranslatable counts points the backend's protocol cannot carry.
func (e *Exporter[R]) Untranslatable(err error, points int) { e.stats.untranslatable(err, points) }

// Lost counts points of batches that could not be made into a request.
func (e *Exporter[R]) Lost(err error, points int) { e.stats.notQueued(err, points) }

// Stopping is closed once the exporter stops.
func (e *Exporter[R]) Stopping() <-chan struct{} { return e.sender.Stopping() }

// convert hands the queue the request ConsumeMetrics made.
func (e *Exporter[R]) convert(ctx context.Context, md pmetric.Metrics) (xexporterhelper.Request, error) {
	if r, ok := Prepared[R](ctx); ok {
		return r, nil
	}
	r, _, err := e.s.Encode(md)
	if err != nil {
		return nil, consumererror.NewPermanent(err)
	}
	return r, nil
}

// push sends a batch from the queue, in the queue's order (after a restart
// too: backlog.go, rewound).
func (e *Exporter[R]) push(ctx context.Context, req xexporterhelper.Request) error {
	r, ok := req.(R)
	if !ok {
		var want R
		return consumererror.NewPermanent(&typeError{got: req, want: want})
	}
	return e.sender.Deliver(ctx, r)
}

// UserAgent is the push exporters' User-Agent: otelcol-ernic/<version> (<os>/<arch>).
func UserAgent(b component.BuildInfo) string {
	return fmt.Sprintf("%s/%s (%s/%s)", b.Command, b.Version, runtime.GOOS, runtime.GOARCH)
}

// Merger is merge_window's, nil without it.
func (e *Exporter[R]) Merger() Merger { return e.merger }

// Snapshot is what the exporter counted since start (deliverystats shows it while it runs).
func (e *Exporter[R]) Snapshot() deliverystats.Snapshot { return e.stats.snapshot() }

// Queued is the backlog under the queue's sizer (an earlier process's included).
func (e *Exporter[R]) Queued() int64 { return e.queue.size() }

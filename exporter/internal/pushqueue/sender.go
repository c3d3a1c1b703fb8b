// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"
)

// Request is a queue item the Sender handles.
type Request interface {
	xexporterhelper.Request
	// ID is NewID's value at creation; 0 if stored without one.
	ID() uint64
}

// remainder is a request partly sent (remote write's): what is left of it.
type remainder interface {
	Remaining() (points, bytes int)
}

func remaining[R Request](r R) (points, bytes int) {
	if p, ok := any(r).(remainder); ok {
		return p.Remaining()
	}
	return r.ItemsCount(), r.BytesSize()
}

// Sender retries, and drops the oldest batch for the newest when the
// queue is full while sending fails, which exporterhelper's queue cannot.
type Sender[R Request] struct {
	name  string
	retry configretry.BackOffConfig
	send  func(context.Context, R, *Tally) error
	cause func(error) string
	stats *stats
	queue *backlog
	// persistent: a batch left at shutdown stays in the queue (else it is lost).
	persistent atomic.Bool
	failing    atomic.Bool
	// drop: a producer asks, the waiting sender answers with the size freed.
	drop     chan chan int64
	stop     chan struct{}
	stopOnce sync.Once
}

// ShutdownRetry is exporterhelper's retry for a Sender's queue: Deliver
// fails retryably only at shutdown, so a persistent queue keeps the request.
var ShutdownRetry = configretry.BackOffConfig{
	Enabled: true, InitialInterval: 100 * time.Millisecond, Multiplier: 2,
	MaxInterval: time.Second, RandomizationFactor: 0,
}

// sizeOf is r's size under the queue's sizer.
func sizeOf(sizer exporterhelper.RequestSizerType, r xexporterhelper.Request) int64 {
	switch sizer {
	case exporterhelper.RequestSizerTypeBytes:
		return int64(r.BytesSize())
	case exporterhelper.RequestSizerTypeItems:
		return int64(r.ItemsCount())
	default:
		return 1
	}
}

// bound is the largest queue item (ItemBound).
func (s *Sender[R]) bound() (items, bytes int64) { return ItemBound(s.queue.sizer, s.queue.capacity) }

// ItemBound is the largest queue item: half the queue's capacity (at least
// 1) in items or in bytes, so that an item never waits for the whole queue
// to empty. 0 and 0 for the requests sizer or no queue.
func ItemBound(sizer exporterhelper.RequestSizerType, capacity int64) (items, bytes int64) {
	if capacity <= 0 {
		return 0, 0
	}
	half := max(capacity/2, 1)
	switch sizer {
	case exporterhelper.RequestSizerTypeItems:
		return half, 0
	case exporterhelper.RequestSizerTypeBytes:
		return 0, half
	default:
		return 0, 0
	}
}

// tooLarge is why r can never be queued: it is larger than the whole queue.
func (s *Sender[R]) tooLarge(r R) error {
	if size := sizeOf(s.queue.sizer, r); s.queue.capacity > 0 && size > s.queue.capacity {
		return consumererror.NewPermanent(fmt.Errorf("%s: a batch of %d (%s) is more than sending_queue::queue_size %d holds; raise it: %w", s.name, size, s.queue.sizer, s.queue.capacity, deliveryreport.ErrTooLarge))
	}
	return nil
}

// Enqueue puts r in inner's queue, dropping the oldest for room while
// sending fails; while sending works a full queue makes the caller wait
// (block_on_overflow). A refusal is counted and logged here.
func (s *Sender[R]) Enqueue(ctx context.Context, inner exporter.Metrics, r R) error {
	if err := s.tooLarge(r); err != nil {
		s.stats.tooLarge(err, r.ItemsCount())
		return err
	}
	size := sizeOf(s.queue.sizer, r)
	if s.queue.capacity > 0 {
		for need := s.queue.size() + size - s.queue.capacity; need > 0 && s.failing.Load(); {
			freed, ok := s.dropOldest(100 * time.Millisecond)
			if !ok {
				break
			}
			need -= freed
		}
	}
	s.queue.add(1, r.ItemsCount(), r.BytesSize())
	done := make(chan error, 1)
	go func() { done <- Offer(ctx, inner, r) }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				s.queue.add(-1, r.ItemsCount(), r.BytesSize())
				s.stats.notQueued(err, r.ItemsCount())
				return err
			}
			s.stats.queued(r.ID())
			return nil
		case <-tick.C:
			// Still waiting for room: a sender that started failing since makes it.
			if s.queue.capacity > 0 && s.failing.Load() && s.queue.size()+size > s.queue.capacity {
				s.dropOldest(100 * time.Millisecond)
			}
		case <-s.stop:
			s.queue.add(-1, r.ItemsCount(), r.BytesSize())
			err := fmt.Errorf("%s: stopping while the queue is full: %w", s.name, context.Canceled)
			s.stats.notQueued(err, r.ItemsCount())
			return err
		}
	}
}

// dropOldest asks a sender waiting to retry to drop its request.
func (s *Sender[R]) dropOldest(d time.Duration) (int64, bool) {
	ack := make(chan int64, 1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case s.drop <- ack:
		return <-ack, true
	case <-t.C:
		return 0, false
	case <-s.stop:
		return 0, false
	}
}

// Deliver sends r with retries; only a stopping exporter gets a retryable
// error. A batch given up (rejected, dropped) is a permanent error, so that
// exporterhelper's own telemetry never counts it sent.
func (s *Sender[R]) Deliver(ctx context.Context, r R) error {
	s.stats.sending(r.ID())
	defer s.stats.settled(r.ID())
	var bo *backoff.ExponentialBackOff
	var first time.Time
	for {
		t := &Tally{s: s.stats, id: r.ID(), failed: -1}
		err := s.send(ctx, r, t)
		select {
		case <-s.stop:
			if err != nil && !consumererror.IsPermanent(err) {
				s.left(r)
				return err // stopping: the queue keeps or drains it
			}
		default:
		}
		if err == nil || consumererror.IsPermanent(err) {
			s.failing.Store(false)
			s.settle(r, t, err)
			return err
		}
		s.failing.Store(true)
		points := t.failed
		if points < 0 {
			points, _ = remaining(r)
		}
		if !s.retry.Enabled {
			s.stats.report.Failed(s.cause(err), err, 0, s.queue.report())
			p, b := remaining(r)
			s.stats.droppedFor(deliverystats.ReasonRetryDisabled, p, b)
			s.finish(r)
			return consumererror.NewPermanent(err)
		}
		if bo == nil {
			first = time.Now()
			bo = &backoff.ExponentialBackOff{
				InitialInterval: s.retry.InitialInterval, RandomizationFactor: s.retry.RandomizationFactor,
				Multiplier: s.retry.Multiplier, MaxInterval: s.retry.MaxInterval,
			}
			bo.Reset()
		}
		wait := max(bo.NextBackOff(), RetryAfter(err)) // the endpoint's, when longer
		if s.retry.MaxElapsedTime > 0 && time.Since(first)+wait > s.retry.MaxElapsedTime {
			p, b := remaining(r)
			s.stats.droppedFor(deliverystats.ReasonMaxElapsedTime, p, b)
			s.finish(r)
			return consumererror.NewPermanent(fmt.Errorf("%s: retried for max_elapsed_time %s: %w", s.name, s.retry.MaxElapsedTime, err))
		}
		s.stats.retriedAfter(s.cause(err), withNote(err), points, wait)
		if stop := s.wait(ctx, r, wait); stop != nil {
			if errors.Is(stop, errDropped) {
				// Permanent: exporterhelper counts it failed, never sent.
				return consumererror.NewPermanent(fmt.Errorf("%s: %w: %w", s.name, errDropped, err))
			}
			s.left(r)
			return stop
		}
	}
}

// withNote adds to err what was made of the backend's Retry-After, if anything.
func withNote(err error) error {
	if note := retryAfterNote(err); note != "" {
		return fmt.Errorf("%w (%s)", err, note)
	}
	return err
}

// settle counts a finished attempt that Send did not count itself.
func (s *Sender[R]) settle(r R, t *Tally, err error) {
	switch {
	case t.recorded:
	case err == nil:
		s.stats.sent(r.ItemsCount(), r.BytesSize(), r.ID())
	default:
		s.stats.rejectedFor(s.cause(err), err, r.ItemsCount())
	}
	s.finish(r)
	s.stats.report.Settled(s.queue.reportWithout(r.ItemsCount(), r.BytesSize()))
}

// left: r stays queued at shutdown in a persistent queue, else it is lost.
func (s *Sender[R]) left(r R) {
	if s.persistent.Load() {
		return
	}
	p, b := remaining(r)
	s.stats.droppedFor(deliverystats.ReasonShutdown, p, b)
	s.finish(r)
}

var errDropped = errors.New("the oldest batch, dropped for room while sending fails")

// wait returns nil to retry, errDropped, or why retries stop.
func (s *Sender[R]) wait(ctx context.Context, r R, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case ack := <-s.drop:
		p, b := remaining(r)
		s.stats.droppedFor(deliverystats.ReasonOldest, p, b)
		s.finish(r)
		ack <- sizeOf(s.queue.sizer, r)
		return errDropped
	case <-s.stop:
		return fmt.Errorf("%s: stopped while retrying; the batch stays in a persistent queue", s.name)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish takes r out of an in-memory queue's count.
func (s *Sender[R]) finish(r R) { s.queue.add(-1, r.ItemsCount(), r.BytesSize()) }

// Stopping is closed once Stop was called.
func (s *Sender[R]) Stopping() <-chan struct{} { return s.stop }

// Stop ends retries and waits for room; call it before stopping the queue.
func (s *Sender[R]) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// Backlog is the queue's content, for the logs.
func (s *Sender[R]) Backlog() deliveryreport.Backlog { return s.queue.report() }

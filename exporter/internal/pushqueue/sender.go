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
)

// Request is a queue item the Sender handles.
type Request interface {
	xexporterhelper.Request
	// ID is NewID's value at creation; 0 if stored without one.
	ID() uint64
}

// SenderSettings are what an exporter's Sender is made of.
type SenderSettings[R Request] struct {
	Name   string
	Report *deliveryreport.Report
	Retry  configretry.BackOffConfig
	// Capacity 0: no queue.
	Sizer    exporterhelper.RequestSizerType
	Capacity int64
	// Send makes one attempt; a permanent error rejects r, any other is retried.
	Send func(context.Context, R) error
	// Cause names a failure for the logs (deliveryreport.Cause if nil).
	Cause func(error) string
}

// Sender retries, and drops the oldest batch for the newest when the
// queue is full during an outage, which exporterhelper's queue cannot.
type Sender[R Request] struct {
	s SenderSettings[R]
	// queued counts only this process's requests (IDs above firstID).
	queued  atomic.Int64
	firstID uint64
	failing atomic.Bool
	// drop: a producer asks, the waiting sender answers with the size freed.
	drop     chan chan int64
	stop     chan struct{}
	stopOnce sync.Once
}

// NewSender returns a Sender.
func NewSender[R Request](s SenderSettings[R]) *Sender[R] {
	if s.Cause == nil {
		s.Cause = deliveryreport.Cause
	}
	return &Sender[R]{s: s, firstID: NewID(), drop: make(chan chan int64), stop: make(chan struct{})}
}

// ShutdownRetry is exporterhelper's retry for a Sender's queue: Deliver
// fails retryably only at shutdown, so a persistent queue keeps the request.
var ShutdownRetry = configretry.BackOffConfig{
	Enabled: true, InitialInterval: 100 * time.Millisecond, Multiplier: 2,
	MaxInterval: time.Second, RandomizationFactor: 0,
}

// size is r's size under the queue's sizer.
func (s *Sender[R]) size(r R) int64 {
	switch s.s.Sizer {
	case exporterhelper.RequestSizerTypeBytes:
		return int64(r.BytesSize())
	case exporterhelper.RequestSizerTypeItems:
		return int64(r.ItemsCount())
	default:
		return 1
	}
}

// HalfQueue is half the queue's capacity (at least 1) in items or in
// bytes, where a merged item stops: an item as large as the queue would
// wait for it to empty. 0 and 0 for the requests sizer or no queue.
func (s *Sender[R]) HalfQueue() (items, bytes int64) {
	if s.s.Capacity <= 0 {
		return 0, 0
	}
	half := max(s.s.Capacity/2, 1)
	switch s.s.Sizer {
	case exporterhelper.RequestSizerTypeItems:
		return half, 0
	case exporterhelper.RequestSizerTypeBytes:
		return 0, half
	default:
		return 0, 0
	}
}

// TooLarge rejects an r larger than the whole queue: it would wait forever.
func (s *Sender[R]) TooLarge(r R, what string) error {
	if size := s.size(r); s.s.Capacity > 0 && size > s.s.Capacity {
		return consumererror.NewPermanent(fmt.Errorf("%s: %s of %d (%s) is more than sending_queue::queue_size %d holds; raise it", s.s.Name, what, size, s.s.Sizer, s.s.Capacity))
	}
	return nil
}

// Enqueue puts r in inner's queue, dropping the oldest for room while sending fails.
func (s *Sender[R]) Enqueue(ctx context.Context, inner exporter.Metrics, r R) error {
	size := s.size(r)
	if s.s.Capacity > 0 {
		for need := s.queued.Load() + size - s.s.Capacity; need > 0 && s.failing.Load(); {
			freed, ok := s.dropOldest(100 * time.Millisecond)
			if !ok {
				break
			}
			need -= freed
		}
	}
	done := make(chan error, 1)
	go func() { done <- Offer(ctx, inner, r) }()
	offered := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err == nil {
				s.queued.Add(size)
			}
			return err
		case now := <-tick.C:
			// An earlier process's requests fill the queue (not a slow write).
			if s.s.Capacity > 0 && s.failing.Load() && now.Sub(offered) > 2*time.Second {
				s.dropOldest(100 * time.Millisecond)
			}
		case <-s.stop:
			return fmt.Errorf("%s: stopping while the queue is full", s.s.Name)
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

// Deliver sends r with retries; only a stopping exporter gets a retryable error.
func (s *Sender[R]) Deliver(ctx context.Context, r R) error {
	var bo *backoff.ExponentialBackOff
	var first time.Time
	for {
		err := s.s.Send(ctx, r)
		select {
		case <-s.stop:
			if err != nil && !consumererror.IsPermanent(err) {
				return err // stopping: the queue keeps or drains it
			}
		default:
		}
		if err == nil || consumererror.IsPermanent(err) {
			s.failing.Store(false)
			s.finish(r)
			s.s.Report.Settled(s.Backlog())
			return err
		}
		s.failing.Store(true)
		retry := s.s.Retry
		if !retry.Enabled {
			s.s.Report.Failed(s.s.Cause(err), err, 0, s.Backlog())
			s.finish(r)
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
		wait := max(bo.NextBackOff(), RetryAfter(err)) // the endpoint's, when longer
		if retry.MaxElapsedTime > 0 && time.Since(first)+wait > retry.MaxElapsedTime {
			s.s.Report.Dropped("retried for max_elapsed_time", r.ItemsCount(), r.BytesSize(), s.Backlog())
			s.finish(r)
			return nil
		}
		s.s.Report.Failed(s.s.Cause(err), err, wait, s.Backlog())
		if stop := s.wait(ctx, r, wait); stop != nil {
			if errors.Is(stop, errDropped) {
				return nil
			}
			return stop
		}
	}
}

var errDropped = errors.New("dropped to make room")

// wait returns nil to retry, errDropped, or why retries stop.
func (s *Sender[R]) wait(ctx context.Context, r R, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case ack := <-s.drop:
		s.s.Report.Dropped("queue full", r.ItemsCount(), r.BytesSize(), s.Backlog())
		s.finish(r)
		ack <- s.size(r)
		return errDropped
	case <-s.stop:
		return fmt.Errorf("%s: stopped while retrying; the batch stays in a persistent queue", s.s.Name)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish takes r out of this process's queue accounting.
func (s *Sender[R]) finish(r R) {
	if r.ID() > s.firstID {
		s.queued.Add(-s.size(r))
	}
}

// Stopping is closed once Stop was called.
func (s *Sender[R]) Stopping() <-chan struct{} { return s.stop }

// Stop ends retries and waits for room; call it before stopping the queue.
func (s *Sender[R]) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// Backlog is what this process has queued and not finished, for the logs.
func (s *Sender[R]) Backlog() deliveryreport.Backlog {
	return deliveryreport.Backlog{Size: max(s.queued.Load(), 0), Sizer: s.s.Sizer.String(), Capacity: s.s.Capacity}
}

// Queued is the size Backlog reports.
func (s *Sender[R]) Queued() int64 { return s.queued.Load() }

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
)

// batch is a request of one item, numbered in the order it was made.
type batch struct {
	seq int
	id  uint64
}

func newBatch(seq int) *batch { return &batch{seq: seq, id: NewID()} }

func (b *batch) ID() uint64      { return b.id }
func (b *batch) ItemsCount() int { return 1 }
func (b *batch) BytesSize() int  { return 1 }
func (b *batch) MergeSplit(context.Context, int, exporterhelper.RequestSizerType, xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	return nil, errors.New("not merged")
}

// endpoint answers Send: failing (retryable) while down, else it takes the
// batch.
type endpoint struct {
	down     atomic.Bool
	attempts atomic.Int64
	mu       sync.Mutex
	got      []int
}

func (e *endpoint) send(_ context.Context, b *batch) error {
	e.attempts.Add(1)
	if e.down.Load() {
		return errors.New("connection refused")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, b.seq)
	return nil
}

func (e *endpoint) delivered() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.got...)
}

var fastRetry = configretry.BackOffConfig{Enabled: true, InitialInterval: 20 * time.Millisecond, Multiplier: 1, MaxInterval: 20 * time.Millisecond}

func newTestSender(t *testing.T, retry configretry.BackOffConfig, capacity int64, send func(context.Context, *batch) error) (*Sender[*batch], *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	return NewSender(SenderSettings[*batch]{
		Name: "test", Report: deliveryreport.New(zap.New(core), "test", "http://x"),
		Retry: retry, Sizer: exporterhelper.RequestSizerTypeRequests, Capacity: capacity, Send: send,
	}), logs
}

// During an outage a full queue makes room by dropping its oldest batch:
// when the endpoint is back, the newest batches are what it gets, in order.
func TestSenderDropsTheOldestDuringAnOutage(t *testing.T) {
	ep := &endpoint{}
	ep.down.Store(true)
	s, logs := newTestSender(t, fastRetry, 3, ep.send)
	q := exporterhelper.NewDefaultQueueConfig()
	q.Sizer, q.QueueSize, q.NumConsumers, q.BlockOnOverflow = exporterhelper.RequestSizerTypeRequests, 3, 1, true
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	convert := func(ctx context.Context, _ pmetric.Metrics) (xexporterhelper.Request, error) {
		r, ok := Prepared[*batch](ctx)
		require.True(t, ok)
		return r, nil
	}
	push := func(ctx context.Context, r xexporterhelper.Request) error { return s.Deliver(ctx, r.(*batch)) }
	inner, err := xexporterhelper.NewMetricsRequest(context.Background(), exportertest.NewNopSettings(component.MustNewType("test")), convert, push,
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{}), exporterhelper.WithRetry(ShutdownRetry),
		xexporterhelper.WithQueueBatch(configoptional.Some(q), xexporterhelper.QueueBatchSettings{}))
	require.NoError(t, err)
	require.NoError(t, inner.Start(context.Background(), componenttest.NewNopHost()))
	defer func() {
		s.Stop()
		require.NoError(t, inner.Shutdown(context.Background()))
	}()

	require.NoError(t, s.Enqueue(context.Background(), inner, newBatch(1)))
	require.Eventually(t, func() bool { return ep.attempts.Load() > 0 }, 5*time.Second, time.Millisecond)
	for seq := 2; seq <= 8; seq++ {
		require.NoError(t, s.Enqueue(context.Background(), inner, newBatch(seq)))
		assert.LessOrEqual(t, s.Queued(), int64(3), "after batch %d", seq)
	}
	ep.down.Store(false)
	require.Eventually(t, func() bool { return len(ep.delivered()) == 3 && s.Queued() == 0 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, []int{6, 7, 8}, ep.delivered())
	assert.NotEmpty(t, logs.FilterMessage("test dropped the oldest batch: queue full").All())
}

// A wait the endpoint asks for (Retry-After) is kept when it is longer
// than the backoff.
func TestSenderKeepsTheEndpointsRetryAfter(t *testing.T) {
	var times []time.Time
	send := func(context.Context, *batch) error {
		times = append(times, time.Now())
		if len(times) == 1 {
			return NewRetryAfter(errors.New("503"), 300*time.Millisecond)
		}
		return nil
	}
	s, _ := newTestSender(t, fastRetry, 0, send)
	require.NoError(t, s.Deliver(context.Background(), newBatch(1)))
	require.Len(t, times, 2)
	assert.GreaterOrEqual(t, times[1].Sub(times[0]), 300*time.Millisecond)
}

// A rejected batch is not retried, and the rejection reaches exporterhelper
// (which counts it failed).
func TestSenderDoesNotRetryARejection(t *testing.T) {
	attempts := 0
	send := func(context.Context, *batch) error {
		attempts++
		return consumererror.NewPermanent(errors.New("400"))
	}
	s, _ := newTestSender(t, fastRetry, 0, send)
	err := s.Deliver(context.Background(), newBatch(1))
	assert.True(t, consumererror.IsPermanent(err))
	assert.Equal(t, 1, attempts)
}

// A batch is dropped once retrying it would pass max_elapsed_time.
func TestSenderGivesUpAfterMaxElapsedTime(t *testing.T) {
	retry := fastRetry
	retry.MaxElapsedTime = 200 * time.Millisecond
	send := func(context.Context, *batch) error { return errors.New("connection refused") }
	s, logs := newTestSender(t, retry, 0, send)
	start := time.Now()
	require.NoError(t, s.Deliver(context.Background(), newBatch(1)))
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	assert.NotEmpty(t, logs.FilterMessage("test dropped the oldest batch: retried for max_elapsed_time").All())
}

// Without retries a failure is final, and permanent for exporterhelper.
func TestSenderWithoutRetries(t *testing.T) {
	send := func(context.Context, *batch) error { return errors.New("connection refused") }
	s, _ := newTestSender(t, configretry.BackOffConfig{Enabled: false}, 0, send)
	assert.True(t, consumererror.IsPermanent(s.Deliver(context.Background(), newBatch(1))))
}

// Stopping ends a retry with a retryable error, so that exporterhelper
// leaves the batch in a persistent queue.
func TestSenderStopEndsRetries(t *testing.T) {
	send := func(context.Context, *batch) error { return errors.New("connection refused") }
	s, _ := newTestSender(t, fastRetry, 0, send)
	done := make(chan error, 1)
	go func() { done <- s.Deliver(context.Background(), newBatch(1)) }()
	time.Sleep(100 * time.Millisecond)
	s.Stop()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.False(t, consumererror.IsPermanent(err))
	case <-time.After(5 * time.Second):
		t.Fatal("Deliver did not return after Stop")
	}
}

// NewID grows with every call, even within one clock tick.
func TestNewIDGrows(t *testing.T) {
	last := NewID()
	for range 10000 {
		id := NewID()
		require.Greater(t, id, last)
		last = id
	}
}

func TestRetryAfterOfWrappedErrors(t *testing.T) {
	err := NewRetryAfter(errors.New("429"), 3*time.Second)
	assert.Equal(t, 3*time.Second, RetryAfter(consumererror.NewPermanent(err)))
	assert.Zero(t, RetryAfter(errors.New("plain")))
	assert.Equal(t, "429", err.Error())
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue

import (
	"context"
	"encoding/binary"
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
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
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

// batchEncoding stores a batch as its sequence number and ID.
type batchEncoding struct{}

func (batchEncoding) Marshal(b *batch) ([]byte, error) {
	return binary.AppendUvarint(binary.AppendUvarint(nil, uint64(b.seq)), b.id), nil
}

func (batchEncoding) Unmarshal(buf []byte) (*batch, error) {
	seq, n := binary.Uvarint(buf)
	id, m := binary.Uvarint(buf[max(n, 0):])
	if n <= 0 || m <= 0 {
		return nil, errors.New("bad batch")
	}
	return &batch{seq: int(seq), id: id}, nil
}

// newTestExporter returns a started exporter of batches with a queue of
// capacity requests (none if 0), sending with send.
func newTestExporter(t *testing.T, retry configretry.BackOffConfig, capacity int64, send func(context.Context, *batch) error) (*Exporter[*batch], *observer.ObservedLogs) {
	e, logs, _ := newObservedExporter(t, retry, capacity, send)
	return e, logs
}

// newObservedExporter is newTestExporter with exporterhelper's own telemetry read by the reader it returns.
func newObservedExporter(t *testing.T, retry configretry.BackOffConfig, capacity int64, send func(context.Context, *batch) error) (*Exporter[*batch], *observer.ObservedLogs, *sdkmetric.ManualReader) {
	core, logs := observer.New(zap.InfoLevel)
	set := exportertest.NewNopSettings(component.MustNewType("test"))
	set.Logger = zap.New(core)
	reader := sdkmetric.NewManualReader()
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	queue := configoptional.None[exporterhelper.QueueBatchConfig]()
	if capacity > 0 {
		q := exporterhelper.NewDefaultQueueConfig()
		q.Sizer, q.QueueSize, q.NumConsumers, q.BlockOnOverflow = exporterhelper.RequestSizerTypeRequests, capacity, 1, true
		q.Batch = configoptional.None[exporterhelper.BatchConfig]()
		queue = configoptional.Some(q)
	}
	e, err := New(context.Background(), Settings[*batch]{
		Exporter: set, Endpoint: "http://x", Queue: queue, Retry: retry, Encoding: batchEncoding{},
		Encode: func(pmetric.Metrics) (*batch, bool, error) { return nil, false, errors.New("not used") },
		Send:   func(ctx context.Context, b *batch, _ *Tally) error { return send(ctx, b) },
	})
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })
	return e, logs, reader
}

// helperCount sums exporterhelper's counter name.
func helperCount(t *testing.T, reader *sdkmetric.ManualReader, name string) int64 {
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// During an outage a full queue makes room by dropping its oldest batch:
// when the endpoint is back, the newest batches are what it gets, in order.
func TestSenderDropsTheOldestDuringAnOutage(t *testing.T) {
	ep := &endpoint{}
	ep.down.Store(true)
	e, logs, reader := newObservedExporter(t, fastRetry, 3, ep.send)

	require.NoError(t, e.Enqueue(context.Background(), newBatch(1)))
	require.Eventually(t, func() bool { return ep.attempts.Load() > 0 }, 5*time.Second, time.Millisecond)
	for seq := 2; seq <= 8; seq++ {
		require.NoError(t, e.Enqueue(context.Background(), newBatch(seq)))
		assert.LessOrEqual(t, e.queue.size(), int64(3), "after batch %d", seq)
	}
	ep.down.Store(false)
	require.Eventually(t, func() bool { return len(ep.delivered()) == 3 && e.queue.size() == 0 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, []int{6, 7, 8}, ep.delivered())
	assert.NotEmpty(t, logs.FilterMessage("test dropped the oldest batch: queue full").All())
	snap := e.stats.snapshot()
	assert.Equal(t, int64(5), snap.PointsDropped["oldest"])
	assert.Equal(t, int64(3), snap.PointsSent)
	// exporterhelper's own telemetry agrees: a drop is never sent.
	assert.Equal(t, int64(3), helperCount(t, reader, "otelcol_exporter_sent_metric_points"))
	assert.Equal(t, int64(5), helperCount(t, reader, "otelcol_exporter_send_failed_metric_points"))
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
	e, _ := newTestExporter(t, fastRetry, 0, send)
	require.NoError(t, e.sender.Deliver(context.Background(), newBatch(1)))
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
	e, _ := newTestExporter(t, fastRetry, 0, send)
	err := e.sender.Deliver(context.Background(), newBatch(1))
	assert.True(t, consumererror.IsPermanent(err))
	assert.Equal(t, 1, attempts)
}

// A batch is dropped once retrying it would pass max_elapsed_time.
func TestSenderGivesUpAfterMaxElapsedTime(t *testing.T) {
	retry := fastRetry
	retry.MaxElapsedTime = 200 * time.Millisecond
	send := func(context.Context, *batch) error { return errors.New("connection refused") }
	e, logs := newTestExporter(t, retry, 0, send)
	start := time.Now()
	err := e.sender.Deliver(context.Background(), newBatch(1))
	assert.True(t, consumererror.IsPermanent(err), "a drop is never a success: %v", err)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	assert.NotEmpty(t, logs.FilterMessage("test dropped a batch: retried for retry_on_failure::max_elapsed_time").All())
}

// Without retries a failure is final, and permanent for exporterhelper.
func TestSenderWithoutRetries(t *testing.T) {
	send := func(context.Context, *batch) error { return errors.New("connection refused") }
	e, _ := newTestExporter(t, configretry.BackOffConfig{Enabled: false}, 0, send)
	assert.True(t, consumererror.IsPermanent(e.sender.Deliver(context.Background(), newBatch(1))))
}

// Stopping ends a retry with a retryable error, so that exporterhelper
// leaves the batch in a persistent queue.
func TestSenderStopEndsRetries(t *testing.T) {
	send := func(context.Context, *batch) error { return errors.New("connection refused") }
	e, _ := newTestExporter(t, fastRetry, 0, send)
	done := make(chan error, 1)
	go func() { done <- e.sender.Deliver(context.Background(), newBatch(1)) }()
	time.Sleep(100 * time.Millisecond)
	e.sender.Stop()
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

func TestReasonLabels(t *testing.T) {
	for cause, want := range map[string]string{
		"http 503": "http_503", "grpc ResourceExhausted": "grpc_resource_exhausted", "grpc Unavailable": "grpc_unavailable",
		"timeout": "timeout", "connection": "connection", "2.0 not understood": "2_0_not_understood",
	} {
		assert.Equal(t, want, reason(cause), cause)
	}
}

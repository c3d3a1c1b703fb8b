// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushtest // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushtest"

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/storagetest"
	"github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"
)

// Target is one push exporter under the policy test.
type Target struct {
	Endpoint Endpoint
	// Start makes an exporter of the package sending to Endpoint with queue
	// and retry, and starts it on host.
	Start func(t *testing.T, queue exporterhelper.QueueBatchConfig, retry configretry.BackOffConfig, host component.Host) (exporter.Metrics, *observer.ObservedLogs)
	// Rejected is the `reason` of a 400 (or the protocol's equivalent).
	Rejected string
	// Dates: the protocol's Retry-After can be an HTTP date (not gRPC's RetryInfo).
	Dates bool
}

const (
	// points is each batch's size; capacity holds three batches.
	points   = 5
	capacity = 3 * points
)

var fastRetry = configretry.BackOffConfig{Enabled: true, InitialInterval: 20 * time.Millisecond, Multiplier: 1, MaxInterval: 20 * time.Millisecond}

func queueOf(storage *component.ID) exporterhelper.QueueBatchConfig {
	q := exporterhelper.NewDefaultQueueConfig()
	q.Sizer, q.QueueSize, q.NumConsumers, q.BlockOnOverflow = exporterhelper.RequestSizerTypeItems, capacity, 1, true
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	q.StorageID = storage
	return q
}

// RunPolicy runs the push policy's cases against the exporters newTarget makes.
func RunPolicy(t *testing.T, newTarget func(*testing.T) Target) {
	for name, run := range map[string]func(*testing.T, Target){
		"every batch accepted":                           accepted,
		"a rejected batch is dropped, the next goes":     rejected,
		"a failing batch is retried until it goes":       retried,
		"Retry-After forms":                              retryAfterForms,
		"a full queue while sending works waits":         fullWhileSending,
		"a full queue during an outage drops the oldest": fullDuringOutage,
		"a full queue after a restart drops the oldest":  fullAfterRestart,
		"a batch larger than the queue is refused":       tooLarge,
		"stopping loses only an in-memory queue":         stopping,
		"the batch being sent at a restart goes first":   restartOrder,
		"two restarts in one outage keep the order":      twoRestarts,
	} {
		t.Run(name, func(t *testing.T) { run(t, newTarget(t)) })
	}
}

func startMemory(t *testing.T, tg Target) exporter.Metrics {
	e, _ := tg.Start(t, queueOf(nil), fastRetry, componenttest.NewNopHost())
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

func send(t *testing.T, e exporter.Metrics, batches ...int) {
	t.Helper()
	for _, b := range batches {
		require.NoError(t, e.ConsumeMetrics(context.Background(), otlptest.Batch(b, points)), "batch %d", b)
	}
}

// counts is what the exporter counted (pushqueue.Exporter.Snapshot).
func counts(t *testing.T, e exporter.Metrics) deliverystats.Snapshot {
	t.Helper()
	s, ok := e.(interface{ Snapshot() deliverystats.Snapshot })
	require.True(t, ok, "%T has no Snapshot", e)
	return s.Snapshot()
}

// settled waits until e counted as sent what the endpoint took (its answer
// reaches e after the endpoint recorded the request) and returns the counts.
func settled(t *testing.T, e exporter.Metrics, ep Endpoint) deliverystats.Snapshot {
	t.Helper()
	waitFor(t, "the counts", func() bool { return counts(t, e).PointsSent == int64(ep.Points()) })
	return counts(t, e)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, "waiting for %s", what)
}

func accepted(t *testing.T, tg Target) {
	e := startMemory(t, tg)
	send(t, e, 1, 2, 3, 4, 5)
	waitFor(t, "5 batches", func() bool { return len(tg.Endpoint.Accepted()) == 5 })
	assert.Equal(t, []int{1, 2, 3, 4, 5}, tg.Endpoint.Accepted())
	c := settled(t, e, tg.Endpoint)
	assert.Equal(t, int64(5*points), c.PointsSent, "sent is what the endpoint took")
	assert.Positive(t, c.BytesSent)
	waitFor(t, "an empty queue", func() bool { return counts(t, e).QueuePoints == 0 })
	assert.False(t, c.SentNewest.IsZero())
	assert.Empty(t, c.PointsRejected)
	shown := deliverystats.All()
	require.Len(t, shown, 1, "the running exporter is shown")
	assert.Equal(t, c.PointsSent, shown[0].PointsSent)
}

func rejected(t *testing.T, tg Target) {
	e := startMemory(t, tg)
	tg.Endpoint.Answer(Answer{Status: http.StatusBadRequest})
	send(t, e, 1)
	waitFor(t, "the rejection", func() bool { return counts(t, e).PointsRejected[tg.Rejected] == points })
	tg.Endpoint.Answer(Answer{})
	send(t, e, 2)
	waitFor(t, "batch 2", func() bool { return len(tg.Endpoint.Accepted()) == 1 })
	assert.Equal(t, []int{2}, tg.Endpoint.Accepted())
	c := settled(t, e, tg.Endpoint)
	assert.Equal(t, int64(points), c.PointsSent)
	assert.Len(t, tg.Endpoint.Attempts(), 2, "a rejection is not retried")
}

func retried(t *testing.T, tg Target) {
	e := startMemory(t, tg)
	tg.Endpoint.Answer(Answer{Status: http.StatusServiceUnavailable})
	send(t, e, 1)
	waitFor(t, "3 attempts", func() bool { return len(tg.Endpoint.Attempts()) >= 3 })
	tg.Endpoint.Answer(Answer{})
	waitFor(t, "batch 1", func() bool { return len(tg.Endpoint.Accepted()) == 1 })
	c := settled(t, e, tg.Endpoint)
	failed := int64(len(tg.Endpoint.Attempts())-1) * points
	var retriedPoints int64
	for _, n := range c.PointsRetried {
		retriedPoints += n
	}
	assert.Equal(t, failed, retriedPoints, "every failed attempt's points: %v", c.PointsRetried)
	assert.Equal(t, int64(points), c.PointsSent)
}

// retryAfterForms: a wait asked for in seconds or as a date is kept; one
// in the past or unreadable leaves the (20 ms) backoff alone.
func retryAfterForms(t *testing.T, tg Target) {
	date := func(d time.Duration) func() string {
		return func() string { return time.Now().Add(d).UTC().Format(http.TimeFormat) }
	}
	fixed := func(v string) func() string { return func() string { return v } }
	for _, c := range []struct {
		value   func() string
		atLeast time.Duration
		below   time.Duration
		date    bool
	}{
		{value: fixed("1"), atLeast: 900 * time.Millisecond},
		// A date has whole seconds: 3 s ahead is more than 2.
		{value: date(3 * time.Second), atLeast: 1900 * time.Millisecond, date: true},
		{value: date(-time.Hour), below: 800 * time.Millisecond, date: true},
		{value: fixed("soon"), below: 800 * time.Millisecond},
	} {
		if c.date && !tg.Dates {
			continue
		}
		e := startMemory(t, tg)
		before := len(tg.Endpoint.Attempts())
		tg.Endpoint.Answer(Answer{Status: http.StatusTooManyRequests, RetryAfter: c.value()})
		send(t, e, 1)
		waitFor(t, "the first attempt", func() bool { return len(tg.Endpoint.Attempts()) > before })
		tg.Endpoint.Answer(Answer{})
		waitFor(t, "the retry", func() bool { return len(tg.Endpoint.Attempts()) > before+1 })
		at := tg.Endpoint.Attempts()[before:]
		gap := at[1].Sub(at[0])
		if c.atLeast > 0 {
			assert.GreaterOrEqual(t, gap, c.atLeast, "Retry-After %q", c.value())
		} else {
			assert.Less(t, gap, c.below, "Retry-After %q", c.value())
		}
		require.NoError(t, e.Shutdown(context.Background()))
	}
}

// fullWhileSending: a slow backend makes the producer wait; nothing is lost.
func fullWhileSending(t *testing.T, tg Target) {
	e := startMemory(t, tg)
	tg.Endpoint.Answer(Answer{Delay: 100 * time.Millisecond})
	send(t, e, 1, 2, 3, 4, 5, 6, 7, 8)
	waitFor(t, "8 batches", func() bool { return len(tg.Endpoint.Accepted()) == 8 })
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8}, tg.Endpoint.Accepted())
	c := settled(t, e, tg.Endpoint)
	assert.Equal(t, int64(8*points), c.PointsSent)
	assert.Zero(t, sum(c.PointsDropped), "%v", c.PointsDropped)
}

// fullDuringOutage: the newest three batches are kept, the oldest dropped.
func fullDuringOutage(t *testing.T, tg Target) {
	e := startMemory(t, tg)
	tg.Endpoint.Answer(Answer{Down: true})
	send(t, e, 1)
	waitFor(t, "the first attempt", func() bool { return len(tg.Endpoint.Attempts()) > 0 })
	for b := 2; b <= 8; b++ {
		send(t, e, b)
		assert.LessOrEqual(t, counts(t, e).QueuePoints, int64(capacity), "after batch %d", b)
	}
	assert.Equal(t, int64(capacity), counts(t, e).QueuePoints)
	tg.Endpoint.Answer(Answer{})
	waitFor(t, "the newest batches", func() bool { return len(tg.Endpoint.Accepted()) == 3 })
	assert.Equal(t, []int{6, 7, 8}, tg.Endpoint.Accepted())
	c := settled(t, e, tg.Endpoint)
	assert.Equal(t, int64(5*points), c.PointsDropped[deliverystats.ReasonOldest])
	assert.Equal(t, int64(3*points), c.PointsSent)
}

// stoppedInAnOutage runs a first process that fills a persistent queue
// with batches 1 to 3 while the endpoint is down (1 being sent), and stops
// it; a second process started with the queue and host it returns finds them.
func stoppedInAnOutage(t *testing.T, tg Target) (exporterhelper.QueueBatchConfig, component.Host) {
	id := component.MustNewID("test_storage")
	host := storagetest.NewMemStorage().Host(id)
	tg.Endpoint.Answer(Answer{Down: true})
	first, _ := tg.Start(t, queueOf(&id), fastRetry, host)
	send(t, first, 1)
	waitFor(t, "the first attempt", func() bool { return len(tg.Endpoint.Attempts()) > 0 })
	send(t, first, 2, 3)
	assert.Equal(t, int64(capacity), counts(t, first).QueuePoints)
	require.NoError(t, first.Shutdown(context.Background()))
	return queueOf(&id), host
}

// fullAfterRestart: an earlier process's batches fill the queue; the new
// process drops them for its own, never refusing a batch.
func fullAfterRestart(t *testing.T, tg Target) {
	q, host := stoppedInAnOutage(t, tg)
	second, _ := tg.Start(t, q, fastRetry, host)
	defer func() { require.NoError(t, second.Shutdown(context.Background())) }()
	assert.Equal(t, int64(capacity), counts(t, second).QueuePoints, "the earlier process's backlog counts")
	send(t, second, 4, 5, 6)
	tg.Endpoint.Answer(Answer{})
	waitFor(t, "the newest batches", func() bool { return len(tg.Endpoint.Accepted()) == 3 })
	assert.Equal(t, []int{4, 5, 6}, tg.Endpoint.Accepted())
	c := settled(t, second, tg.Endpoint)
	assert.Equal(t, int64(3*points), c.PointsDropped[deliverystats.ReasonOldest])
	assert.Zero(t, c.PointsDropped[deliverystats.ReasonQueueFull])
}

func tooLarge(t *testing.T, tg Target) {
	e := startMemory(t, tg)
	err := e.ConsumeMetrics(context.Background(), otlptest.Batch(1, capacity+1))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err))
	assert.Contains(t, err.Error(), "sending_queue::queue_size")
	send(t, e, 2)
	waitFor(t, "batch 2", func() bool { return len(tg.Endpoint.Accepted()) == 1 })
	c := settled(t, e, tg.Endpoint)
	assert.Equal(t, int64(capacity+1), c.PointsRejected[deliverystats.ReasonTooLarge])
	assert.Equal(t, []int{2}, tg.Endpoint.Accepted())
}

// stopping during an outage: an in-memory queue's batches are counted
// lost; a persistent queue keeps them for the next process.
func stopping(t *testing.T, tg Target) {
	tg.Endpoint.Answer(Answer{Down: true})
	e, _ := tg.Start(t, queueOf(nil), fastRetry, componenttest.NewNopHost())
	send(t, e, 1)
	waitFor(t, "the first attempt", func() bool { return len(tg.Endpoint.Attempts()) > 0 })
	send(t, e, 2)
	require.NoError(t, e.Shutdown(context.Background()))
	last := counts(t, e)
	assert.Equal(t, int64(2*points), last.PointsDropped[deliverystats.ReasonShutdown], "%v", last.PointsDropped)
	assert.Empty(t, tg.Endpoint.Accepted())
	assert.Empty(t, deliverystats.All(), "a stopped exporter is not shown")

	id := component.MustNewID("test_storage")
	storage := storagetest.NewMemStorage()
	kept, _ := tg.Start(t, queueOf(&id), fastRetry, storage.Host(id))
	send(t, kept, 3)
	waitFor(t, "an attempt", func() bool { return len(tg.Endpoint.Attempts()) > 2 })
	send(t, kept, 4)
	require.NoError(t, kept.Shutdown(context.Background()))
	assert.Zero(t, counts(t, kept).PointsDropped[deliverystats.ReasonShutdown])
	next, _ := tg.Start(t, queueOf(&id), fastRetry, storage.Host(id))
	defer func() { require.NoError(t, next.Shutdown(context.Background())) }()
	assert.Equal(t, int64(2*points), counts(t, next).QueuePoints, "kept for the next process")
}

// restartOrder: the batch being sent when the process stopped goes first
// after a restart, though exporterhelper's queue puts it at its tail.
func restartOrder(t *testing.T, tg Target) {
	q, host := stoppedInAnOutage(t, tg)
	tg.Endpoint.Answer(Answer{})
	second, _ := tg.Start(t, q, fastRetry, host)
	defer func() { require.NoError(t, second.Shutdown(context.Background())) }()
	waitFor(t, "3 batches", func() bool { return len(tg.Endpoint.Accepted()) == 3 })
	assert.Equal(t, []int{1, 2, 3}, tg.Endpoint.Accepted())
	assert.Equal(t, int64(3*points), settled(t, second, tg.Endpoint).PointsSent)
}

// twoRestarts: a second process stopped while it sends the first's
// interrupted batch; the third still sends every batch in order.
func twoRestarts(t *testing.T, tg Target) {
	q, host := stoppedInAnOutage(t, tg)
	before := len(tg.Endpoint.Attempts())
	second, _ := tg.Start(t, q, fastRetry, host)
	waitFor(t, "the second process's attempts", func() bool { return len(tg.Endpoint.Attempts()) > before+1 })
	require.NoError(t, second.Shutdown(context.Background()))
	tg.Endpoint.Answer(Answer{})
	third, _ := tg.Start(t, q, fastRetry, host)
	defer func() { require.NoError(t, third.Shutdown(context.Background())) }()
	waitFor(t, "3 batches", func() bool { return len(tg.Endpoint.Accepted()) == 3 })
	assert.Equal(t, []int{1, 2, 3}, tg.Endpoint.Accepted())
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flushes records what a Window flushed, each value a list of batches.
type flushes struct {
	mu   sync.Mutex
	got  [][]int
	fail error
}

func (f *flushes) flush(_ context.Context, p *[]int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, *p)
	return f.fail
}

func (f *flushes) all() [][]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]int(nil), f.got...)
}

func openList() (*[]int, error) { return &[]int{}, nil }

// appendTo adds batch b and calls the value full at size batches (0: never).
func appendTo(b, size int) func(*[]int) (bool, error) {
	return func(p *[]int) (bool, error) {
		*p = append(*p, b)
		return size > 0 && len(*p) >= size, nil
	}
}

func TestWindowFlushesWhenItEnds(t *testing.T) {
	f := &flushes{}
	w := NewWindow(200*time.Millisecond, f.flush)
	start := time.Now()
	for b := 1; b <= 3; b++ {
		require.NoError(t, w.Add(context.Background(), openList, nil, appendTo(b, 0)))
	}
	assert.Empty(t, f.all(), "nothing before the window ends")
	require.Eventually(t, func() bool { return len(f.all()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	assert.Equal(t, [][]int{{1, 2, 3}}, f.all())
	assert.False(t, w.Pending(func(*[]int) {}), "nothing pending after the flush")
}

func TestWindowFullFlushesAtOnce(t *testing.T) {
	f := &flushes{}
	w := NewWindow(time.Hour, f.flush)
	for b := 1; b <= 5; b++ {
		require.NoError(t, w.Add(context.Background(), openList, nil, appendTo(b, 2)))
	}
	assert.Equal(t, [][]int{{1, 2}, {3, 4}}, f.all())
	require.NoError(t, w.Flush(context.Background()))
	assert.Equal(t, [][]int{{1, 2}, {3, 4}, {5}}, f.all())
	require.NoError(t, w.Flush(context.Background()), "nothing pending: nothing to do")
	assert.Len(t, f.all(), 3)
}

// A batch that does not fit flushes the pending value and starts the next.
func TestWindowBatchThatDoesNotFitStartsTheNext(t *testing.T) {
	f := &flushes{}
	w := NewWindow(time.Hour, f.flush)
	fits := func(p *[]int) bool { return len(*p) < 2 }
	for b := 1; b <= 3; b++ {
		require.NoError(t, w.Add(context.Background(), openList, fits, appendTo(b, 0)))
	}
	assert.Equal(t, [][]int{{1, 2}}, f.all())
	var pending []int
	require.True(t, w.Pending(func(p *[]int) { pending = *p }))
	assert.Equal(t, []int{3}, pending)
}

// An error from add abandons the value: its window does not flush it, and
// the next batch opens a new one.
func TestWindowAddErrorAbandonsTheValue(t *testing.T) {
	f := &flushes{}
	w := NewWindow(100*time.Millisecond, f.flush)
	require.NoError(t, w.Add(context.Background(), openList, nil, appendTo(1, 0)))
	broken := errors.New("compressor failed")
	err := w.Add(context.Background(), openList, nil, func(*[]int) (bool, error) { return false, broken })
	require.ErrorIs(t, err, broken)
	time.Sleep(300 * time.Millisecond)
	assert.Empty(t, f.all(), "the abandoned value is not flushed")
	require.NoError(t, w.Add(context.Background(), openList, nil, appendTo(2, 1)))
	assert.Equal(t, [][]int{{2}}, f.all())
}

// The queue's refusal reaches the caller whose batch filled the value.
func TestWindowReturnsTheQueuesRefusal(t *testing.T) {
	refused := errors.New("sending queue is full")
	f := &flushes{fail: refused}
	w := NewWindow(time.Hour, f.flush)
	require.NoError(t, w.Add(context.Background(), openList, nil, appendTo(1, 2)))
	require.ErrorIs(t, w.Add(context.Background(), openList, nil, appendTo(2, 2)), refused)
}

// An open that fails leaves nothing pending.
func TestWindowOpenError(t *testing.T) {
	f := &flushes{}
	w := NewWindow(time.Hour, f.flush)
	bad := errors.New("no compressor")
	err := w.Add(context.Background(), func() (*[]int, error) { return nil, bad }, nil, appendTo(1, 0))
	require.ErrorIs(t, err, bad)
	assert.False(t, w.Pending(func(*[]int) {}))
}

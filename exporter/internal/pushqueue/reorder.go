// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
)

// Encoding stores a backend's requests in a persistent queue.
type Encoding[R Request] interface {
	Marshal(r R) ([]byte, error)
	Unmarshal(b []byte) (R, error)
}

// reorder sends first the batches exporterhelper's persistent queue puts
// back at its tail at start (those being sent when the process ended),
// where a TSDB would refuse them as out of order: they are read back and
// stored again, and a batch read back is known by its ID.
type reorder[R Request] struct {
	enc Encoding[R]
	// unreadable: a stored batch that does not decode; exporterhelper drops it.
	unreadable func(error)

	mu sync.Mutex
	// read are the IDs read back and not yet handed out to be sent.
	read map[uint64]bool
	// pending are to send first, oldest first.
	pending []R
	// done were sent ahead; skipped when the queue hands them out.
	done map[uint64]bool
}

func newReorder[R Request](enc Encoding[R], unreadable func(error)) *reorder[R] {
	return &reorder[R]{enc: enc, unreadable: unreadable, read: map[uint64]bool{}, done: map[uint64]bool{}}
}

// queueEncoding is what exporterhelper's queue gets: the backend's encoding, watched.
type queueEncoding[R Request] struct{ o *reorder[R] }

func (e queueEncoding[R]) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(R)
	if !ok {
		var want R
		return nil, &typeError{got: req, want: want}
	}
	e.o.stored(r)
	return e.o.enc.Marshal(r)
}

func (e queueEncoding[R]) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	r, err := e.o.enc.Unmarshal(b)
	if err != nil {
		e.o.unreadable(err)
		return nil, nil, err
	}
	e.o.mu.Lock()
	if r.ID() != 0 {
		e.o.read[r.ID()] = true
	}
	e.o.mu.Unlock()
	return context.Background(), r, nil
}

// stored: r is being written to the queue; one read back is being moved to the tail.
func (o *reorder[R]) stored(r R) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.read[r.ID()] {
		return
	}
	delete(o.read, r.ID())
	o.pending = append(o.pending, r)
	slices.SortFunc(o.pending, func(a, b R) int { return cmp.Compare(a.ID(), b.ID()) })
}

// next is the oldest moved batch not yet sent ahead.
func (o *reorder[R]) next() (R, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) == 0 {
		var zero R
		return zero, false
	}
	return o.pending[0], true
}

// sentAhead: r went ahead of the queue.
func (o *reorder[R]) sentAhead(r R) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pending = slices.DeleteFunc(o.pending, func(p R) bool { return p.ID() == r.ID() })
	o.done[r.ID()] = true
}

// handedOut: the queue hands r out to be sent; true if it was sent ahead already.
func (o *reorder[R]) handedOut(r R) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.read, r.ID())
	if !o.done[r.ID()] {
		return false
	}
	delete(o.done, r.ID())
	return true
}

type typeError struct{ got, want any }

func (e *typeError) Error() string {
	return fmt.Sprintf("a queue item is a %T, not a %T", e.got, e.want)
}

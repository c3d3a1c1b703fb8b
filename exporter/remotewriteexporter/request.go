// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
)

// request is one batch as it sits in the sending queue: the remote-write
// requests it was translated to, snappy-compressed and ready to send.
type request struct {
	// payloads are the compressed WriteRequest messages, in send order.
	payloads [][]byte
	// samples is the number of samples of each payload (for the logs).
	samples []int
	// next is the first payload not yet accepted or rejected: a retry of
	// a partly sent batch resumes there.
	next int
	// bytes is the sum of the payloads' lengths.
	bytes int
	// restored: read back from a persistent queue (every batch a
	// persistent queue hands out is).
	restored bool
	// id is unique and grows with the time the batch was made; it is
	// stored with the batch (see movedBatches).
	id uint64
	// proto is the message the payloads are encoded in.
	proto protocol
}

var _ xexporterhelper.Request = (*request)(nil)

func newRequest(payloads [][]byte, samples []int) *request {
	r := &request{payloads: payloads, samples: samples, id: pushqueue.NewID(), proto: protocolV1}
	for _, p := range payloads {
		r.bytes += len(p)
	}
	return r
}

// ID is when the batch was made (pushqueue.NewID).
func (r *request) ID() uint64 { return r.id }

// ItemsCount is the number of samples in the batch.
func (r *request) ItemsCount() int {
	n := 0
	for _, s := range r.samples {
		n += s
	}
	return n
}

// BytesSize is the size of the compressed payloads, what the queue keeps.
func (r *request) BytesSize() int { return r.bytes }

// MergeSplit is called only by the queue's batcher, which Validate rules
// out: requests are cut at translation. It returns the request as it is.
func (r *request) MergeSplit(_ context.Context, _ int, _ exporterhelper.RequestSizerType, r2 xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if r2 != nil {
		return nil, errors.New("remote_write: requests are not merged (sending_queue::batch is not supported)")
	}
	return []xexporterhelper.Request{r}, nil
}

// encoding stores a request in the persistent queue: a version byte, the
// protocol (a byte: 1 or 2), the id, the payload count, then per payload its sample count, its length and
// its bytes (unsigned varints). What was already sent is not kept apart:
// after a restart the whole batch is sent again, which a remote-write
// receiver takes as duplicates of the same samples.
type encoding struct {
	// moved learns the batches the queue moves to its tail on start.
	moved *movedBatches
}

// encodingVersion is the stored form written; encodingV1Only, the form of
// the builds before remote write 2.0 (no protocol byte: 1.0), is still
// read.
const (
	encodingVersion = 3
	encodingV1Only  = 2
)

func (c encoding) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(*request)
	if !ok {
		return nil, fmt.Errorf("remote_write: cannot store a %T", req)
	}
	buf := make([]byte, 0, r.bytes+1+binary.MaxVarintLen64*(1+2*len(r.payloads)))
	if r.restored && c.moved != nil {
		// Only a batch read back from the queue is stored again: the
		// persistent queue does it on start with the batches that were
		// being sent when the last process ended.
		c.moved.add(r)
	}
	buf = append(buf, encodingVersion, byte(r.proto))
	buf = binary.AppendUvarint(buf, r.id)
	buf = binary.AppendUvarint(buf, uint64(len(r.payloads)))
	for i, p := range r.payloads {
		buf = binary.AppendUvarint(buf, uint64(r.samples[i]))
		buf = binary.AppendUvarint(buf, uint64(len(p)))
		buf = append(buf, p...)
	}
	return buf, nil
}

func (encoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	bad := func(what string) error {
		return fmt.Errorf("remote_write: stored request of %d bytes: %s", len(b), what)
	}
	proto := protocolV1
	switch {
	case len(b) >= 2 && b[0] == encodingVersion && (b[1] == byte(protocolV1) || b[1] == byte(protocolV2)):
		proto, b = protocol(b[1]), b[2:]
	case len(b) >= 1 && b[0] == encodingV1Only:
		b = b[1:]
	default:
		return nil, nil, bad("unknown version")
	}
	id, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, bad("bad id")
	}
	b = b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, bad("bad payload count")
	}
	b = b[k:]
	payloads := make([][]byte, 0, n)
	samples := make([]int, 0, n)
	for range n {
		s, k := binary.Uvarint(b)
		if k <= 0 || s > 1<<40 {
			return nil, nil, bad("bad sample count")
		}
		b = b[k:]
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, nil, bad("cut payload")
		}
		b = b[k:]
		payloads = append(payloads, b[:l:l])
		samples = append(samples, int(s))
		b = b[l:]
	}
	if len(b) != 0 {
		return nil, nil, bad("bytes after the last payload")
	}
	r := newRequest(payloads, samples)
	r.restored, r.id, r.proto = true, id, proto
	return context.Background(), r, nil
}

// movedBatches works around the persistent queue's restart order. A batch
// that was being sent when the process ended (a retry during an outage, a
// kill) is put back at the queue's tail on the next start, behind every
// newer batch; sent there, its samples would be older than the newest of
// their series, and a Prometheus TSDB rejects them as out of order. The
// queue stores those batches again on start (encoding.Marshal of a restored
// request), so they are known before the first push: push sends them first,
// and skips them when the queue hands them out at its tail.
type movedBatches struct {
	mu      sync.Mutex
	pending []*request      // to send first, oldest first
	done    map[uint64]bool // sent ahead; skipped when the queue hands them out
}

func (m *movedBatches) add(r *request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(m.pending, r)
	slices.SortFunc(m.pending, func(a, b *request) int { return cmp.Compare(a.id, b.id) })
}

// next returns the oldest moved batch not yet sent, or nil.
func (m *movedBatches) next() *request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) == 0 {
		return nil
	}
	return m.pending[0]
}

// sent records that r went out ahead of its place in the queue.
func (m *movedBatches) sent(r *request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = slices.DeleteFunc(m.pending, func(p *request) bool { return p.id == r.id })
	if m.done == nil {
		m.done = map[uint64]bool{}
	}
	m.done[r.id] = true
}

// wasSent reports (once) whether r was already sent ahead.
func (m *movedBatches) wasSent(r *request) bool {
	if !r.restored {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done[r.id] {
		return false
	}
	delete(m.done, r.id)
	return true
}

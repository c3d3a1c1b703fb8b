// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// request is one queue item: compressed remote-write requests, ready to send.
type request struct {
	// payloads are in send order.
	payloads [][]byte
	// samples counts each payload's samples.
	samples []int
	// next is where a retry of a partly sent batch resumes.
	next int
	// bytes sums the payloads' lengths.
	bytes int
	// id is pushqueue.NewID's, stored with the batch.
	id uint64
	// proto is the payloads' message.
	proto translator.Protocol
}

var _ xexporterhelper.Request = (*request)(nil)

func newRequest(payloads [][]byte, samples []int) *request {
	r := &request{payloads: payloads, samples: samples, id: pushqueue.NewID(), proto: translator.ProtocolV1}
	for _, p := range payloads {
		r.bytes += len(p)
	}
	return r
}

// requestOf is the queue item of w.
func requestOf(w translator.Requests) *request {
	r := newRequest(w.Payloads, w.Samples)
	r.proto = w.Protocol
	return r
}

// ID is when the batch was made (pushqueue.NewID).
func (r *request) ID() uint64 { return r.id }

// ItemsCount counts the batch's samples.
func (r *request) ItemsCount() int {
	n := 0
	for _, s := range r.samples {
		n += s
	}
	return n
}

// BytesSize is what the queue keeps.
func (r *request) BytesSize() int { return r.bytes }

// Remaining is what a retry still has to send (pushqueue counts a drop with it).
func (r *request) Remaining() (samples, bytes int) {
	for i := r.next; i < len(r.payloads); i++ {
		samples += r.samples[i]
		bytes += len(r.payloads[i])
	}
	return samples, bytes
}

// MergeSplit returns r as it is: the queue's batcher is not supported.
func (r *request) MergeSplit(_ context.Context, _ int, _ exporterhelper.RequestSizerType, r2 xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if r2 != nil {
		return nil, errors.New("remote_write: requests are not merged (sending_queue::batch is not supported)")
	}
	return []xexporterhelper.Request{r}, nil
}

// encoding stores a request as: version byte, protocol byte, id, payload
// count, then per payload its sample count, length (uvarints) and bytes.
type encoding struct{}

// encodingV1Only, before remote write 2.0 (no protocol byte), is still read.
const (
	encodingVersion = 3
	encodingV1Only  = 2
)

func (encoding) Marshal(r *request) ([]byte, error) {
	buf := make([]byte, 0, r.bytes+1+binary.MaxVarintLen64*(1+2*len(r.payloads)))
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

func (encoding) Unmarshal(b []byte) (*request, error) {
	bad := func(what string) error {
		return fmt.Errorf("remote_write: stored request of %d bytes: %s", len(b), what)
	}
	proto := translator.ProtocolV1
	switch {
	case len(b) >= 2 && b[0] == encodingVersion && (b[1] == byte(translator.ProtocolV1) || b[1] == byte(translator.ProtocolV2)):
		proto, b = translator.Protocol(b[1]), b[2:]
	case len(b) >= 1 && b[0] == encodingV1Only:
		b = b[1:]
	default:
		return nil, bad("unknown version")
	}
	id, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, bad("bad id")
	}
	b = b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, bad("bad payload count")
	}
	b = b[k:]
	payloads := make([][]byte, 0, n)
	samples := make([]int, 0, n)
	for range n {
		s, k := binary.Uvarint(b)
		if k <= 0 || s > 1<<40 {
			return nil, bad("bad sample count")
		}
		b = b[k:]
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, bad("cut payload")
		}
		b = b[k:]
		payloads = append(payloads, b[:l:l])
		samples = append(samples, int(s))
		b = b[l:]
	}
	if len(b) != 0 {
		return nil, bad("bytes after the last payload")
	}
	r := newRequest(payloads, samples)
	r.id, r.proto = id, proto
	return r, nil
}

// countUntranslated counts the points the translator left out, if any.
func countUntranslated(count func(error, int), err error) {
	if ue, ok := err.(*translator.UntranslatedError); ok { //nolint:errorlint // the translator returns it unwrapped
		count(err, ue.Points())
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

import (
	"slices"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"
)

// Requests are compressed remote-write requests, in send order.
type Requests struct {
	Payloads [][]byte
	// Samples counts each payload's samples.
	Samples  []int
	Protocol Protocol
}

// Batch is one queue item being built from one batch or, with
// merge_window, several.
type Batch struct {
	// bufs are the pooled buffers raw and comp came from.
	bufs *buffers
	// raw is the uncompressed end of the request being written; comp the
	// compressed blocks before it, ending at blockEnds.
	raw       []byte
	comp      []byte
	blockEnds []int
	rawDone   int
	inRaw     int // samples in the request being written
	payloads  [][]byte
	samples   []int
	// bytes and itemsDone sum the payloads.
	bytes     int
	itemsDone int
	// Spill, while set, is called before a series that could take the item
	// past CapItems samples or CapBytes compressed bytes (0: no bound), to
	// queue what st holds (Take).
	Spill              func(st *Batch)
	CapItems, CapBytes int

	labels  []prompb.Label
	order   labelOrder
	skipped untranslated
	// sym is nil for 1.0, cleared at each of the cuts between requests.
	proto Protocol
	sym   *symbolTable
	cuts  int
	// resLabels are the promoted resource labels, for templates.
	resLabels []prompb.Label
	// key is the template key being looked up; values fill its holes.
	key    []byte
	values []string
}

// chunkBytes: a request is compressed as it is written, in blocks of
// golang/snappy's own block size joined by s2.ConcatBlocks, so that it is
// never held twice in memory and is as small as if compressed at once
// (docs/performance-memory.md).
const chunkBytes = 64 << 10

// buffers are a Batch's scratch buffers, kept from one item to the next.
type buffers struct {
	raw, comp []byte
	blockEnds []int
	sym       *symbolTable // 2.0 only
}

// bufferPool saves allocating and zeroing the buffers for every batch.
var bufferPool sync.Pool

func (st *Batch) rawSize() int { return st.rawDone + len(st.raw) }

// added counts a series written into raw and compresses a full chunk.
func (st *Batch) added() {
	st.inRaw++
	if len(st.raw) >= chunkBytes {
		st.compress(chunkBytes)
	}
}

// compress moves raw's first n bytes into comp as one snappy block. Blocks
// are cut at chunkBytes, not at series, as golang/snappy would cut them.
func (st *Batch) compress(n int) {
	if n == 0 {
		return
	}
	st.comp = slices.Grow(st.comp, snappy.MaxEncodedLen(n))
	block := snappy.Encode(st.comp[len(st.comp):cap(st.comp)], st.raw[:n])
	st.comp = st.comp[:len(st.comp)+len(block)]
	st.blockEnds = append(st.blockEnds, len(st.comp))
	st.rawDone += n
	st.raw = st.raw[:copy(st.raw, st.raw[n:])]
}

// flush finishes the request being written, if any, as one payload.
func (st *Batch) flush() {
	if st.inRaw == 0 {
		return
	}
	st.compress(len(st.raw))
	blocks := make([][]byte, len(st.blockEnds))
	start := 0
	for i, end := range st.blockEnds {
		blocks[i], start = st.comp[start:end], end
	}
	p, err := s2.ConcatBlocks(nil, blocks...)
	if err != nil {
		// Only 4 GiB or more fails, which Validate rules out.
		st.skipped[tooLarge] += st.inRaw
	} else {
		st.payloads = append(st.payloads, p)
		st.samples = append(st.samples, st.inRaw)
		st.bytes += len(p)
		st.itemsDone += st.inRaw
	}
	st.comp, st.blockEnds, st.rawDone, st.inRaw = st.comp[:0], st.blockEnds[:0], 0, 0
	st.cuts++
	if st.sym != nil {
		st.sym.reset() // each 2.0 request has its own symbols
	}
}

// overflows reports whether a series of entry bytes could take st's item
// past its bound, at snappy's worst case. Kept small enough to inline: it
// runs for every series.
func (st *Batch) overflows(entry int) bool {
	if st.CapItems > 0 {
		return st.itemsDone+st.inRaw >= st.CapItems
	}
	return st.bytes+len(st.comp)+snappy.MaxEncodedLen(len(st.raw)+entry)+64 > st.CapBytes
}

// Take finishes the request being written and hands over the finished
// requests; st goes on empty, for the rest of the batch.
func (st *Batch) Take() Requests {
	st.flush()
	out := Requests{Payloads: st.payloads, Samples: st.samples, Protocol: st.proto}
	st.payloads, st.samples, st.bytes, st.itemsDone = nil, nil, 0, 0
	return out
}

// Size is what a Batch holds so far.
type Size struct {
	// Compressed is the finished requests' bytes.
	Compressed int
	// Bytes adds the request being written's bytes not compressed yet.
	Bytes int
	// Samples counts all the samples written.
	Samples int
}

// Size is what st holds so far.
func (st *Batch) Size() Size {
	return Size{Compressed: st.bytes, Bytes: st.bytes + len(st.raw), Samples: st.itemsDone + st.inRaw}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"slices"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/s2"
	"github.com/prometheus/prometheus/prompb"
)

// batchState is what is built for one queue item, from one batch or, with
// merge_window, several: the WriteRequest being written (raw, uncompressed,
// as protobuf), the compressed requests before it, and one series' labels.
type batchState struct {
	// bufs are the pooled scratch buffers raw and enc came from.
	bufs *buffers
	// raw is the end of the request being written, not compressed yet
	// (about chunkBytes at most); comp the compressed blocks of the rest
	// of it, back to back, ending at blockEnds; rawDone the uncompressed
	// size of those blocks (compress, below).
	raw       []byte
	comp      []byte
	blockEnds []int
	rawDone   int
	inRaw     int // samples in the request being written
	payloads  [][]byte
	samples   []int
	// bytes is the sum of the payloads' lengths, itemsDone of their
	// samples.
	bytes     int
	itemsDone int
	// spill, while set (merge.go), puts the requests in st into the
	// queue as an item of their own before a series that would make the
	// item larger than its bound (capItems samples or capBytes bytes of
	// compressed requests; 0: no bound); st goes on with none.
	spill              func(st *batchState)
	capItems, capBytes int

	labels  []prompb.Label
	order   labelOrder
	skipped untranslated
	// proto is the requests' protocol; sym the 2.0 request's symbols
	// (nil for 1.0), cleared at each of the cuts between requests.
	proto protocol
	sym   *symbolTable
	cuts  int
	// resLabels are the labels of the resource's attributes being
	// translated (promote), for templates.
	resLabels []prompb.Label
	// key is the template key being looked up (templateKey); values the
	// filled-in values of the metric's template, by hole.
	key    []byte
	values []string
}

// chunkBytes is how much of a request is written before it is compressed:
// a request (up to max_batch_size_bytes) is compressed as it is written,
// in blocks of this size (golang/snappy), which make one snappy block at
// the end (klauspost's s2.ConcatBlocks). golang/snappy cuts its input into
// blocks of this size too, so the result is as small as compressing the
// request at once. (s2.EncodeSnappy, faster, made requests markedly
// larger.)
//
// Why: compressing a whole request at the end kept it twice in memory, raw
// and in snappy's worst-case output buffer, held from one scrape to the
// next: the largest of remote write's own memory at 16x64
// (docs/performance-memory.md).
const chunkBytes = 64 << 10

// buffers are the scratch buffers of one queue item's requests, kept from
// one item to the next: raw, the uncompressed end of the request being
// written, and comp and blockEnds, its compressed blocks.
type buffers struct {
	raw, comp []byte
	blockEnds []int
	sym       *symbolTable // 2.0 only
}

// bufferPool keeps the buffers from one item to the next. Without it, the
// buffers were allocated and zeroed for every batch (BenchmarkTranslate).
var bufferPool sync.Pool

// rawSize is the uncompressed size of the request being written.
func (st *batchState) rawSize() int { return st.rawDone + len(st.raw) }

// added counts a series written into raw, and compresses raw's first
// chunkBytes once it holds that many.
func (st *batchState) added() {
	st.inRaw++
	if len(st.raw) >= chunkBytes {
		st.compress(chunkBytes)
	}
}

// compress appends raw's first n bytes, compressed as one snappy block, to
// comp, and keeps the rest of raw. Blocks of exactly chunkBytes are the
// blocks golang/snappy would cut the whole request into: a series cut in
// two by a block end costs nothing, where ending blocks at series made the
// requests 0.5-1.1 % larger.
func (st *batchState) compress(n int) {
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

// flush finishes the request being written, if any: its blocks become one
// snappy block, a payload of its own size, and the next request starts.
func (st *batchState) flush() {
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
		// The blocks are snappy.Encode's: only a request of 4 GiB or
		// more fails here, which max_batch_size_bytes rules out
		// (Validate). Its samples are counted as not translated.
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
		st.sym.reset() // the next 2.0 request has symbols of its own
	}
}

// overflows reports whether a series of entry bytes would make st's item
// larger than its bound: capItems samples, or else capBytes bytes of what
// the item can be at most once compressed (the finished requests, the
// compressed blocks of the one being written, snappy's worst case for the
// rest of it with the series, and the headers of two requests). For an
// empty item it may say yes: spillLocked then has nothing to put in the
// queue, and a series alone larger than the bound makes an item of its
// own, refused when it is larger than the queue too (tooLarge). Small
// enough to be inlined: it runs for every series.
func (st *batchState) overflows(entry int) bool {
	if st.capItems > 0 {
		return st.itemsDone+st.inRaw >= st.capItems
	}
	return st.bytes+len(st.comp)+snappy.MaxEncodedLen(len(st.raw)+entry)+64 > st.capBytes
}

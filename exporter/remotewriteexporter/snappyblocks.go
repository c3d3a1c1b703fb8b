// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"encoding/binary"

	"github.com/golang/snappy"
)

// snappyBlockSize is the block snappy.Encode compresses independently of
// the others (golang/snappy's maxBlockSize): no copy in a block refers to
// another block.
const snappyBlockSize = 65536

// snappyBlocks compresses a remote-write request while the translator
// writes it, into snappy's block format (what Prometheus' remote write
// takes): each whole 64 KiB block written is compressed at once with
// snappy.Encode and its bytes dropped. The result is byte for byte
// snappy.Encode of the whole request, which is the uvarint of the length and
// the blocks compressed one by one (golang/snappy encode.go); but neither
// the whole request nor Encode's worst-case output for it (1.17 times its
// size) is held: at 16 instances × 64 QPs those two buffers were 2.6 MB of
// a 3-4 MB live heap, kept from one scrape to the next.
type snappyBlocks struct {
	// pending is what was written and not compressed yet: less than a
	// block, plus the series being written. The translator appends to it
	// and then calls wrote.
	pending []byte
	// done is the number of bytes written and compressed.
	done int
	// out holds the compressed blocks, after maxVarintLen bytes left for
	// the length.
	out []byte
	// scratch is snappy.Encode's output for one block.
	scratch []byte
}

// Len is the number of bytes written since the last finish.
func (s *snappyBlocks) Len() int { return s.done + len(s.pending) }

// wrote compresses the whole blocks in pending.
func (s *snappyBlocks) wrote() {
	if len(s.pending) < snappyBlockSize {
		return
	}
	if s.out == nil {
		s.out = make([]byte, binary.MaxVarintLen64, 4*snappyBlockSize)
	}
	if s.scratch == nil {
		s.scratch = make([]byte, snappy.MaxEncodedLen(snappyBlockSize))
	}
	rest := s.pending
	for len(rest) >= snappyBlockSize {
		s.out = appendBlock(s.out, s.scratch, rest[:snappyBlockSize])
		rest = rest[snappyBlockSize:]
		s.done += snappyBlockSize
	}
	s.pending = s.pending[:copy(s.pending, rest)]
}

// finish returns the request written since the last finish, compressed, in
// a slice of its own size, and starts the next request.
func (s *snappyBlocks) finish() []byte {
	if s.out == nil {
		s.out = make([]byte, binary.MaxVarintLen64, binary.MaxVarintLen64+snappy.MaxEncodedLen(len(s.pending)))
	}
	if s.scratch == nil && len(s.pending) > 0 {
		s.scratch = make([]byte, snappy.MaxEncodedLen(snappyBlockSize))
	}
	if len(s.pending) > 0 {
		s.out = appendBlock(s.out, s.scratch, s.pending)
	}
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(s.Len()))
	payload := make([]byte, h+len(s.out)-binary.MaxVarintLen64)
	copy(payload, head[:h])
	copy(payload[h:], s.out[binary.MaxVarintLen64:])
	s.out, s.pending, s.done = s.out[:binary.MaxVarintLen64], s.pending[:0], 0
	return payload
}

// appendBlock appends to out the compressed form of block (at most
// snappyBlockSize bytes) without the length that snappy.Encode puts first.
func appendBlock(out, scratch, block []byte) []byte {
	enc := snappy.Encode(scratch, block)
	_, h := binary.Uvarint(enc)
	return append(out, enc[h:]...)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/require"
)

// A request written in pieces of any size, across any number of blocks,
// comes out as snappy.Encode of the whole, byte for byte, and decodes to
// what was written; one writer makes request after request.
func TestSnappyBlocksIsEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	// Compressible text with runs and repeats, as protobuf of labels is.
	words := [][]byte{[]byte("__name__"), []byte("ernic_qp_rx_bytes_total"), []byte("instance"), []byte("node-17"), {0x0a, 0x1f}, {0x12, 0x04}}
	w := &snappyBlocks{}
	for _, size := range []int{0, 1, 16, 17, 100, 65535, 65536, 65537, 2*65536 + 17, 3*65536 - 1, 1 << 20, 3_000_000} {
		var whole []byte
		for len(whole) < size {
			if rng.IntN(4) == 0 {
				whole = append(whole, byte(rng.Uint32()))
			} else {
				whole = append(whole, words[rng.IntN(len(words))]...)
			}
		}
		whole = whole[:size]
		for rest := whole; len(rest) > 0; {
			piece := min(rng.IntN(600)+1, len(rest)) // a series is tens to hundreds of bytes
			w.pending = append(w.pending, rest[:piece]...)
			rest = rest[piece:]
			w.wrote()
			require.Equal(t, size-len(rest), w.Len())
			require.Less(t, len(w.pending), snappyBlockSize)
		}
		got := w.finish()
		require.Equal(t, snappy.Encode(nil, whole), got, "%d bytes", len(whole))
		back, err := snappy.Decode(nil, got)
		require.NoError(t, err)
		require.True(t, bytes.Equal(whole, back), "%d bytes", len(whole))
		require.Zero(t, w.Len(), "finish starts the next request")
	}
}

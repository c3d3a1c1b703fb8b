// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	grpcencoding "google.golang.org/grpc/encoding"
)

// stream is one request being written: each batch's encoding is
// compressed as it comes, so no uncompressed copy of a merged request is
// kept: that copy was as much again as the batches' own encodings
// (docs/performance-memory.md).
type stream struct {
	name string        // the compression's name, "" for none
	out  *bytes.Buffer // the request so far, compressed
	w    io.WriteCloser
	zenc *zstd.Encoder // w when name is zstd, put back to zstdEncoders at close
	gzw  *gzip.Writer  // w when name is gzip, put back to gzipWriters at close
	// window is zenc's window in bytes.
	window int
	raw    int // bytes written, uncompressed
	// largest is the largest write: the largest batch's encoding.
	largest int
	// points is the data points of the batches written.
	points int
}

// openStream starts a request compressed with name ("" for none; see
// Supported). For zstd, window is the encoder's window in bytes
// (zstdWindow); sizeHint is the capacity of an uncompressed request's
// buffer. An error when the compression is unknown.
func openStream(name string, window, sizeHint int) (*stream, error) {
	s := &stream{name: name}
	if name == "" {
		s.out = bytes.NewBuffer(make([]byte, 0, sizeHint))
		return s, nil
	}
	s.out = compressBufs.Get().(*bytes.Buffer)
	s.out.Reset()
	switch name {
	case Zstd:
		enc, err := zstdEncoders.get(window, newZstd(window))
		if err != nil {
			compressBufs.Put(s.out)
			return nil, err
		}
		enc.Reset(s.out)
		s.w, s.zenc, s.window = enc, enc, window
	case Gzip:
		gw, err := gzipWriters.get(0, newGzip)
		if err != nil {
			compressBufs.Put(s.out)
			return nil, err
		}
		gw.Reset(s.out)
		s.w, s.gzw = gw, gw
	default:
		c := grpcencoding.GetCompressor(name)
		if c == nil {
			compressBufs.Put(s.out)
			return nil, fmt.Errorf("no compressor %q", name)
		}
		w, err := c.Compress(s.out)
		if err != nil {
			compressBufs.Put(s.out)
			return nil, err
		}
		s.w = w
	}
	return s, nil
}

// write adds p, the encoding of one batch, to the request.
func (s *stream) write(p []byte) error {
	s.raw += len(p)
	s.largest = max(s.largest, len(p))
	if s.w == nil {
		s.out.Write(p)
		return nil
	}
	_, err := s.w.Write(p)
	return err
}

// close ends the request and returns it, compressed, in a slice of its
// own. The stream is not used after.
func (s *stream) close() ([]byte, error) {
	if s.w == nil {
		return s.out.Bytes(), nil // the buffer goes with the request
	}
	err := s.w.Close()
	var body []byte
	if err == nil {
		body = bytes.Clone(s.out.Bytes())
	}
	s.release()
	return body, err
}

// abandon drops a request that cannot be finished (a write failed),
// giving back its encoder and buffer. The stream is not used after.
func (s *stream) abandon() {
	if s.w != nil {
		_ = s.w.Close()
		s.release()
	}
}

// release gives back the encoder and the buffer of a compressed stream.
func (s *stream) release() {
	switch {
	case s.zenc != nil:
		zstdEncoders.put(s.zenc, s.window)
	case s.gzw != nil:
		gzipWriters.put(s.gzw, 0)
	}
	compressBufs.Put(s.out)
}

// zstdWindow is the zstd window for a request whose largest batch encodes
// to batch bytes: the power of two at or above twice that, from 64 KiB to
// 512 KiB (configgrpc's window, the largest frames the queue has ever
// stored). The instances of a host encode alike, and most of what zstd
// finds is the previous batch: a window that holds it compresses a request
// as well as 512 KiB does, with a smaller encoder; a window smaller than a
// batch compresses markedly worse (docs/performance-memory.md).
func zstdWindow(batch int) int {
	w := 64 << 10
	for w < 2*batch && w < zstdMaxWindow {
		w <<= 1
	}
	return w
}

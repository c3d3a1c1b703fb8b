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

// stream compresses each batch as it comes: no uncompressed copy is kept.
type stream struct {
	name string        // the compression's name, "" for none
	out  *bytes.Buffer // the request so far, compressed
	w    io.WriteCloser
	zenc *zstd.Encoder // w when name is zstd, put back to zstdEncoders at close
	gzw  *gzip.Writer  // w when name is gzip, put back to gzipWriters at close
	// window is zenc's window in bytes.
	window int
	raw    int // bytes written, uncompressed
	// largest is the largest batch's encoding.
	largest int
	// points counts the batches' data points.
	points int
}

// openStream starts a request; sizeHint is an uncompressed request's buffer.
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

// close returns the request in a slice of its own; the stream is done.
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

// abandon drops a request whose write failed; the stream is done.
func (s *stream) abandon() {
	if s.w != nil {
		_ = s.w.Close()
		s.release()
	}
}

func (s *stream) release() {
	switch {
	case s.zenc != nil:
		zstdEncoders.put(s.zenc, s.window)
	case s.gzw != nil:
		gzipWriters.put(s.gzw, 0)
	}
	compressBufs.Put(s.out)
}

// zstdWindow holds twice the largest batch: zstd finds most of a batch in
// the one before, so a larger window only costs memory (docs/performance-memory.md).
func zstdWindow(batch int) int {
	w := 64 << 10
	for w < 2*batch && w < zstdMaxWindow {
		w <<= 1
	}
	return w
}

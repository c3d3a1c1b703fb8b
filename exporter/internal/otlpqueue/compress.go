// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	grpcencoding "google.golang.org/grpc/encoding"
)

// A batch is compressed once, as it enters the queue, with the configured
// compression: the queue stores the compressed request and the sender
// sends it as stored. otlp_grpc and otlp_http would otherwise compress the
// request at each send, and the queue on disk would hold it uncompressed,
// many times the bytes to commit (docs/performance-pipelines.md, OTLP).
//
// gzip and zstd are compressed here, with klauspost/compress's encoders
// kept between requests (gzipWriters, zstdEncoders); any other name is
// gRPC's registered compressor of that name (configgrpc registers snappy).
// What they make is the format as any: the server decompresses it as
// any request of that Content-Encoding or grpc-encoding.

// Gzip and Zstd are the names of the compressions this package compresses
// itself: configcompression's, gRPC's and the HTTP Content-Encoding's.
const (
	Gzip = "gzip"
	Zstd = "zstd"
)

// compressBufs holds the buffers compressed requests are written into
// before they are copied out at their own size.
var compressBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// gzipLevel is the gzip level: the fastest, kept and Reset, about half the
// standard library's level-1 time with no allocation, for a few percent
// more bytes (BenchmarkCompressGzip; docs/performance-pipelines.md).
const gzipLevel = gzip.BestSpeed

// gzipWriters keeps one gzip writer between requests, as zstdEncoders
// keeps a zstd encoder: their state is large to make anew.
var gzipWriters keptWriter[*gzip.Writer]

// zstdEncoders holds the encoder requests are compressed with for zstd:
// klauspost/compress's (the library behind configgrpc's zstd), its fastest
// level, a window of at most 512 KiB as configgrpc's, one block encoder and
// its lower-memory mode. A merged request is written to it as its batches
// come (stream.go), with a window for their size (zstdWindow); a request
// of one batch (no merge window) with a 512 KiB window. configgrpc's
// compressor, a streaming encoder at the default level pooled between
// requests, took several times as long and heap for a slightly larger
// request (docs/performance-pipelines.md, OTLP).
//
// The encoder is kept for the next request (one of another window
// replaces it): its history and match table, made anew for each scrape's
// request, were enough of a small host's allocation to set off a second
// collection a scrape (docs/performance-memory.md).
var zstdEncoders keptWriter[*zstd.Encoder]

// zstdOptions are zstdEncoders' options but the window.
var zstdOptions = []zstd.EOption{
	zstd.WithEncoderLevel(zstd.SpeedFastest),
	zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true),
}

// zstdMaxWindow is the window of a request compressed whole, and the
// largest zstdWindow gives.
const zstdMaxWindow = 512 << 10

// keptWriter keeps one compressor between uses, with the setting it was
// made with (a zstd window in bytes; 0 for gzip). Safe for concurrent use:
// a caller that finds none kept, or one of another setting, makes its
// own, and the last one put back is kept.
type keptWriter[W any] struct {
	mu      sync.Mutex
	w       W
	setting int
	ok      bool // w is set
}

// get returns the kept writer if it was made with setting, or one made by
// newW; put it back after use.
func (c *keptWriter[W]) get(setting int, newW func() (W, error)) (W, error) {
	c.mu.Lock()
	if c.ok && c.setting == setting {
		w := c.w
		var zero W
		c.w, c.ok = zero, false
		c.mu.Unlock()
		return w, nil
	}
	c.mu.Unlock()
	return newW()
}

// put keeps w, made with setting, for the next get, in place of any kept.
func (c *keptWriter[W]) put(w W, setting int) {
	c.mu.Lock()
	c.w, c.setting, c.ok = w, setting, true
	c.mu.Unlock()
}

// newZstd makes a zstd encoder of zstdOptions with a window of window bytes.
func newZstd(window int) func() (*zstd.Encoder, error) {
	return func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, append(zstdOptions, zstd.WithWindowSize(window))...)
	}
}

// newGzip makes a gzip writer at gzipLevel.
func newGzip() (*gzip.Writer, error) { return gzip.NewWriterLevel(nil, gzipLevel) }

// Supported reports whether name ("" for none) is a compression this
// package can compress with: none, gzip, zstd or a compressor registered
// with gRPC.
func Supported(name string) bool {
	return name == "" || name == Gzip || name == Zstd || grpcencoding.GetCompressor(name) != nil
}

// Compress returns raw, one batch's encoding, compressed with name (zstd
// with a 512 KiB window), in a slice of its own: a stream (stream.go) of
// that one batch. An error when name is not Supported.
func Compress(name string, raw []byte) ([]byte, error) {
	s, err := openStream(name, zstdMaxWindow, len(raw))
	if err != nil {
		return nil, err
	}
	if err := s.write(raw); err != nil {
		s.abandon()
		return nil, err
	}
	return s.close()
}

// Decompress returns body decompressed with name ("": body as it is). An
// error when name is not Supported or body does not decompress.
func Decompress(name string, body []byte) ([]byte, error) {
	var r io.Reader
	switch name {
	case "":
		return body, nil
	case Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r = zr
	case Zstd:
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.DecodeAll(body, nil)
	default:
		c := grpcencoding.GetCompressor(name)
		if c == nil {
			return nil, fmt.Errorf("no compressor %q", name)
		}
		var err error
		if r, err = c.Decompress(bytes.NewReader(body)); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(r)
}

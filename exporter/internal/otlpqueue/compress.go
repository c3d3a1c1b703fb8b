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

// Gzip and Zstd are compressed here; other names by gRPC's registered compressors.
const (
	Gzip = "gzip"
	Zstd = "zstd"
)

var compressBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// gzipLevel trades a few bytes for speed (docs/performance-pipelines.md, OTLP).
const gzipLevel = gzip.BestSpeed

// gzipWriters keeps a writer between requests: its state is large to make anew.
var gzipWriters keptWriter[*gzip.Writer]

// zstdEncoders keeps our own encoder, not configgrpc's pooled one (docs/performance-memory.md).
var zstdEncoders keptWriter[*zstd.Encoder]

// zstdOptions are zstdEncoders' options but the window.
var zstdOptions = []zstd.EOption{
	zstd.WithEncoderLevel(zstd.SpeedFastest),
	zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true),
}

// zstdMaxWindow is configgrpc's window, and the largest zstdWindow gives.
const zstdMaxWindow = 512 << 10

// keptWriter keeps one compressor and its setting (zstd window; 0 for gzip).
type keptWriter[W any] struct {
	mu      sync.Mutex
	w       W
	setting int
	ok      bool // w is set
}

// get returns the kept writer of setting, or newW's; put it back after use.
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

func newZstd(window int) func() (*zstd.Encoder, error) {
	return func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, append(zstdOptions, zstd.WithWindowSize(window))...)
	}
}

func newGzip() (*gzip.Writer, error) { return gzip.NewWriterLevel(nil, gzipLevel) }

// Supported reports whether this package can compress with name ("": none).
func Supported(name string) bool {
	return name == "" || name == Gzip || name == Zstd || grpcencoding.GetCompressor(name) != nil
}

// Compress returns raw compressed with name, in a slice of its own.
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

// Decompress returns body decompressed with name ("": as it is).
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/config/configcompression"
	grpcencoding "google.golang.org/grpc/encoding"
)

// A batch is compressed once, as it enters the queue, with the configured
// compression: the queue stores the compressed request and the sender
// sends it as stored. gRPC would otherwise compress the request at each
// send, and the queue on disk would hold it uncompressed: at 16 instances ×
// 64 QPs the bbolt commits of 1.5 MB requests were 13.7 % of the OTLP
// pipeline's CPU and zstd 15.7 % (perf, docs/performance.md), where zstd
// makes about 3.5 bytes of a point's 150.
//
// The compressors are gRPC's registered ones, by name (configgrpc
// registers zstd and snappy, gRPC gzip), except that zstd compresses with an
// encoder of this exporter (zstdEncoders): the frames are zstd's as any, and
// the server decompresses them with its registered decompressor.

// grpcCompression returns the name of the gRPC compressor for t, or "" for
// no compression; an error when gRPC has none of that name.
func grpcCompression(t configcompression.Type) (string, error) {
	if !t.IsCompressed() {
		return "", nil
	}
	if grpcencoding.GetCompressor(string(t)) == nil {
		return "", fmt.Errorf("compression %q: not supported over gRPC (gzip, snappy, zstd or none)", t)
	}
	return string(t), nil
}

// zstdName is the name of zstd in gRPC's registry and in configcompression.
const zstdName = string(configcompression.TypeZstd)

// compressBufs holds the buffers compressed requests are written into
// before they are copied out at their own size.
var compressBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// zstdEncoders holds the encoder requests are compressed with for zstd:
// klauspost/compress's (the library behind configgrpc's zstd), its fastest
// level, a window of at most 512 KiB as configgrpc's, one block encoder and
// its lower-memory mode. A merged request is written to it as its batches
// come (stream.go), with a window for their size (zstdWindow); a request
// of one batch (no merge_window) with a 512 KiB window. configgrpc's
// compressor is a streaming encoder at the default level, kept in a
// sync.Pool between requests. On a 16x64 request
// (487 kB of OTLP protobuf, 9,249 points) the streaming encoder took 1.53
// ms and its pooled state 5.7 MB of heap; this one takes 0.40 ms and makes
// 31.7 kB of it where the default level made 34.0 (5-7 % smaller on five
// requests; docs/performance.md).
//
// The encoder is kept for the next request (one of another window
// replaces it): its history and match table, 0.73 MB at the 64 KiB window
// of a 16x64 host, 1.19 MB at 512 KiB, made anew for each scrape's
// request were a quarter of what a 16x64 scrape allocated, enough that the
// next scrape set off a collection of its own after gc_after_scrape's
// (two a scrape, and the scavenger returning 2.5 MB between them that the
// next scrape faulted in again: 0.36-0.40 CPU s/min against 0.15-0.25
// kept, docs/performance-memory.md).
var zstdEncoders = &keptEncoder{opts: []zstd.EOption{
	zstd.WithEncoderLevel(zstd.SpeedFastest),
	zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true),
}}

// zstdMaxWindow is the window of a request compressed whole, and the
// largest zstdWindow gives.
const zstdMaxWindow = 512 << 10

// windowedEncoder is a zstd encoder and the window it was made with.
type windowedEncoder struct {
	*zstd.Encoder
	window int // bytes
}

// keptEncoder keeps one zstd encoder between uses. Safe for concurrent
// use: a caller that finds none kept, or one of another window, makes its
// own, and the last one put back is kept.
type keptEncoder struct {
	opts []zstd.EOption // all but the window

	mu  sync.Mutex
	enc *windowedEncoder // nil: none kept
}

// get returns the kept encoder if its window is window bytes, or a new
// one; put it back after use.
func (c *keptEncoder) get(window int) (*windowedEncoder, error) {
	c.mu.Lock()
	enc := c.enc
	if enc != nil && enc.window == window {
		c.enc = nil
		c.mu.Unlock()
		return enc, nil
	}
	c.mu.Unlock()
	z, err := zstd.NewWriter(nil, append(c.opts, zstd.WithWindowSize(window))...)
	if err != nil {
		return nil, err
	}
	return &windowedEncoder{Encoder: z, window: window}, nil
}

// put keeps enc for the next get, in place of any kept.
func (c *keptEncoder) put(enc *windowedEncoder) {
	c.mu.Lock()
	c.enc = enc
	c.mu.Unlock()
}

// compressBody returns raw, one batch's encoding, compressed with gRPC's
// compressor name (zstd with an encoder of zstdEncoders, 512 KiB window),
// in a slice of its own: a stream (stream.go) of that one batch.
func compressBody(name string, raw []byte) ([]byte, error) {
	s, err := openStream(name, zstdMaxWindow, 0)
	if err != nil {
		return nil, err
	}
	if err := s.write(raw); err != nil {
		return nil, err
	}
	return s.close()
}

// decompressBody returns body decompressed with gRPC's compressor name
// ("": body as it is).
func decompressBody(name string, body []byte) ([]byte, error) {
	if name == "" {
		return body, nil
	}
	c := grpcencoding.GetCompressor(name)
	if c == nil {
		return nil, fmt.Errorf("no gRPC compressor %q", name)
	}
	r, err := c.Decompress(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// precompressed is the gRPC compressor of the connection (grpc.Compressor,
// set with grpc.WithCompressor): it writes a message as it is, because the
// message is a request compressed when it entered the queue, and names
// the compression in the grpc-encoding header, so the server decompresses
// it as any compressed request. gRPC's newer encoding.Compressor cannot do
// this: it is looked up by the name sent, which must stay the real one.
// A call with grpc.UseCompressor (push, for a request stored with another
// compression) takes precedence over it.
type precompressed string

// Do writes the already compressed message p to w.
func (precompressed) Do(w io.Writer, p []byte) error {
	_, err := w.Write(p)
	return err
}

// Type is the compression's name, sent in the grpc-encoding header.
func (c precompressed) Type() string { return string(c) }

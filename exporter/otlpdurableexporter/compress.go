// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

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

// zstdEncoders holds the encoder compressBody uses for zstd:
// klauspost/compress's (the library behind configgrpc's zstd), its fastest
// level, a 512 KiB window as configgrpc's, one block encoder and its
// lower-memory mode, each request compressed whole with EncodeAll.
// configgrpc's compressor is a streaming encoder at the default level, kept
// in a sync.Pool between requests. On a 16x64 request (487 kB of OTLP
// protobuf, 9,249 points) the streaming encoder took 1.53 ms and its pooled
// state 5.7 MB of heap; this one takes 0.40 ms and makes 31.7 kB of it where
// the default level made 34.0 (5-7 % smaller on five requests;
// docs/performance.md).
//
// The encoder is kept while requests come within zstdIdle of each other (a
// large host's scrape is several requests back to back) and let go after:
// its history and match table are 1.0 MB of heap, which a host sending a
// request every 5 s (16x64) kept live for nothing, and the heap's goal is
// twice what is live. Made anew, an encoder costs about 0.4-1.4 ms more
// for that request (a fresh 0.66 MB to clear).
var zstdEncoders = &idleEncoder{idle: zstdIdle, opts: []zstd.EOption{
	zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(512 << 10),
	zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true),
}}

// zstdIdle is how long an unused zstd encoder is kept (zstdEncoders).
const zstdIdle = time.Second

// idleEncoder keeps one zstd encoder between uses, and drops it when idle
// passes without one. Safe for concurrent use: a caller that finds none
// kept makes its own.
type idleEncoder struct {
	idle time.Duration
	opts []zstd.EOption

	mu    sync.Mutex
	enc   *zstd.Encoder // nil: none kept
	timer *time.Timer   // drops enc; nil before the first put
}

// get returns the kept encoder, or a new one; put it back after use.
func (c *idleEncoder) get() (*zstd.Encoder, error) {
	c.mu.Lock()
	enc := c.enc
	c.enc = nil
	c.mu.Unlock()
	if enc != nil {
		return enc, nil
	}
	return zstd.NewWriter(nil, c.opts...)
}

// put keeps enc for the next get, for idle at most.
func (c *idleEncoder) put(enc *zstd.Encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enc = enc
	if c.timer == nil {
		c.timer = time.AfterFunc(c.idle, c.drop)
		return
	}
	c.timer.Reset(c.idle)
}

// drop lets the kept encoder go (idle passed since the last put).
func (c *idleEncoder) drop() {
	c.mu.Lock()
	c.enc = nil
	c.mu.Unlock()
}

// compressBody returns raw compressed with gRPC's compressor name (zstd with
// an encoder of zstdEncoders), in a slice of its own.
func compressBody(name string, raw []byte) ([]byte, error) {
	buf := compressBufs.Get().(*bytes.Buffer)
	defer compressBufs.Put(buf)
	buf.Reset()
	if name == zstdName {
		enc, err := zstdEncoders.get()
		if err != nil {
			return nil, err
		}
		out := enc.EncodeAll(raw, buf.AvailableBuffer())
		zstdEncoders.put(enc)
		buf.Write(out) // no copy when out is buf's own space; keeps a grown one for the next request
		return bytes.Clone(buf.Bytes()), nil
	}
	c := grpcencoding.GetCompressor(name)
	if c == nil {
		return nil, fmt.Errorf("no gRPC compressor %q", name)
	}
	w, err := c.Compress(buf)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
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

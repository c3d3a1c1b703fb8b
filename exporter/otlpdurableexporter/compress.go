// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"fmt"
	"io"

	"go.opentelemetry.io/collector/config/configcompression"
	grpcencoding "google.golang.org/grpc/encoding"
)

// A batch is compressed once, as it enters the queue (otlpqueue), and sent
// as stored: the connection's compressor (precompressed) only names the
// compression. gzip and zstd are otlpqueue's kept encoders, snappy gRPC's
// registered compressor (configgrpc's).

// grpcCompression returns the name of the gRPC compression for t, or ""
// for no compression; an error when gRPC has no compressor of that name.
func grpcCompression(t configcompression.Type) (string, error) {
	if !t.IsCompressed() {
		return "", nil
	}
	if grpcencoding.GetCompressor(string(t)) == nil {
		return "", fmt.Errorf("compression %q: not supported over gRPC (gzip, snappy, zstd or none)", t)
	}
	return string(t), nil
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

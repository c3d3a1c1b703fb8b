// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"fmt"
	"io"

	"go.opentelemetry.io/collector/config/configcompression"
	grpcencoding "google.golang.org/grpc/encoding"
)

// grpcCompression returns gRPC's name for t ("": none).
func grpcCompression(t configcompression.Type) (string, error) {
	if !t.IsCompressed() {
		return "", nil
	}
	if grpcencoding.GetCompressor(string(t)) == nil {
		return "", fmt.Errorf("compression %q: not supported over gRPC (gzip, snappy, zstd or none)", t)
	}
	return string(t), nil
}

// precompressed writes a message compressed in the queue as it is and names
// its compression in grpc-encoding. gRPC's newer encoding.Compressor cannot:
// it is looked up by the name sent. grpc.UseCompressor on a call overrides it.
type precompressed string

// Do writes the already compressed message p to w.
func (precompressed) Do(w io.Writer, p []byte) error {
	_, err := w.Write(p)
	return err
}

// Type is the compression's name, sent in the grpc-encoding header.
func (c precompressed) Type() string { return string(c) }

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter/internal/metadata"
)

// started returns the exporter's sender, started, with compression c.
func started(t *testing.T, endpoint string, c configcompression.Type) *otlpDurable {
	t.Helper()
	cfg := testConfig(endpoint)
	cfg.Compression = c
	name, err := grpcCompression(c)
	require.NoError(t, err)
	e := &otlpDurable{cfg: cfg, set: exportertest.NewNopSettings(metadata.Type), compression: name}
	require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, e.shutdown(context.Background())) })
	return e
}

// A request stored with another compression than the sender's (a changed
// configuration, or version 1 of the queue encoding: uncompressed) arrives
// whole, compressed as the sender is configured.
func TestStoredWithOtherCompressionDelivered(t *testing.T) {
	md := batch(5, 200)
	raw, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	v1 := append(binary.AppendUvarint([]byte{1}, 200), raw...) // what version 1 stored
	for name, c := range map[string]struct {
		storedWith string // "" with v1: the version 1 entry
		sender     configcompression.Type
	}{
		"gzip stored, zstd sender":    {storedWith: "gzip", sender: configcompression.TypeZstd},
		"zstd stored, no compression": {storedWith: "zstd", sender: "none"},
		"version 1, zstd sender":      {sender: configcompression.TypeZstd},
		"version 1, no compression":   {sender: "none"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, nil)
			stored := v1
			if c.storedWith != "" {
				req, err := otlpqueue.Encode(md, c.storedWith)
				require.NoError(t, err)
				stored, err = otlpqueue.Encoding{}.Marshal(req)
				require.NoError(t, err)
			}
			req, err := otlpqueue.Encoding{}.Unmarshal(stored)
			require.NoError(t, err)
			require.Equal(t, 200, req.ItemsCount())
			e := started(t, srv.addr, c.sender)
			require.NoError(t, e.push(context.Background(), req))
			require.Len(t, srv.accepted(), 1)
			require.Equal(t, jsonOf(t, md), jsonOf(t, srv.accepted()[0]))
			srv.mu.Lock()
			defer srv.mu.Unlock()
			require.Equal(t, c.sender != "none", srv.compressed[0], "compressed on the wire")
		})
	}
}

// A compression gRPC has no compressor for fails the exporter's creation
// with the reason.
func TestUnsupportedCompression(t *testing.T) {
	cfg := testConfig("127.0.0.1:4317")
	cfg.Compression = configcompression.TypeDeflate
	_, err := createMetrics(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.ErrorContains(t, err, `compression "deflate": not supported over gRPC`)
}

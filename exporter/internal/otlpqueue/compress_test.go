// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	_ "go.opentelemetry.io/collector/config/configgrpc" // registers snappy with gRPC
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// What the queue stores reads back as the same request, and the body is
// the batch's ExportMetricsServiceRequest.
func TestEncodingRoundTrip(t *testing.T) {
	md := batch(3, 40)
	req, err := Encode(md, "")
	require.NoError(t, err)
	require.Equal(t, 40, req.ItemsCount())
	stored, err := Encoding{}.Marshal(req)
	require.NoError(t, err)
	back, err := Encoding{}.Unmarshal(stored)
	require.NoError(t, err)
	require.Equal(t, req, back)
	decoded := pmetricotlp.NewExportRequest()
	require.NoError(t, decoded.UnmarshalProto(back.Body))
	require.Equal(t, jsonOf(t, md), jsonOf(t, decoded.Metrics()))
	require.Equal(t, len(back.Body), back.BytesSize())
}

func TestEncodingRejectsDamagedEntries(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":         nil,
		"other version": {9, 1, 0},
		"no name":       {encodingVersion},
		"name too long": {encodingVersion, 5, 'z', 's', 't', 'd'},
		"no count":      {encodingVersion, 0},
		"count too big": {encodingVersion, 0, 0xff, 0xff, 0x03},
		"v1 no count":   {1},
	} {
		_, err := Encoding{}.Unmarshal(b)
		require.Error(t, err, name)
	}
}

// A request is stored compressed, under each compression: a small part of
// the encoded batch, reading back as the same batch.
func TestStoredCompressed(t *testing.T) {
	md := batch(4, 500)
	raw, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	for _, c := range []string{Zstd, Gzip, "snappy"} {
		req, err := Encode(md, c)
		require.NoError(t, err)
		stored, err := Encoding{}.Marshal(req)
		require.NoError(t, err)
		require.Less(t, len(stored), len(raw)/5, "%s: stored %d bytes of a %d-byte request", c, len(stored), len(raw))
		back, err := Encoding{}.Unmarshal(stored)
		require.NoError(t, err)
		require.Equal(t, req, back)
		body, err := Decompress(back.Compression, back.Body)
		require.NoError(t, err)
		require.Equal(t, raw, body, c)
	}
}

// An unknown compression is refused, not stored uncompressed.
func TestUnknownCompression(t *testing.T) {
	require.False(t, Supported("deflate"))
	_, err := Encode(batch(1, 1), "deflate")
	require.ErrorContains(t, err, `no compressor "deflate"`)
	_, err = Decompress("deflate", []byte{1})
	require.ErrorContains(t, err, `no compressor "deflate"`)
	s, _ := testSettings(t, "deflate")
	_, err = NewMetrics(context.Background(), exportertestSettings(), s)
	require.ErrorContains(t, err, `otlp_test: no compressor "deflate"`)
}

// Gzip is a gzip member any reader takes (the standard library's here, as
// Prometheus' OTLP receiver and confighttp decode), at level 1; the writer
// is reused by the next request.
func TestGzipKeptWriter(t *testing.T) {
	raw := counters(t, 500)
	first, err := Compress(Gzip, raw)
	require.NoError(t, err)
	zr, err := stdgzip.NewReader(bytes.NewReader(first))
	require.NoError(t, err)
	back, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, raw, back)
	require.Equal(t, byte(4), first[8], "XFL 4: the fastest level")
	if raceEnabled {
		t.Log("allocations not counted: the race detector drops pooled buffers")
		return
	}
	allocs := testing.AllocsPerRun(20, func() {
		again, err := Compress(Gzip, raw)
		require.NoError(t, err)
		require.Equal(t, first, again)
	})
	// The result's own slice, the stream and the bytes.Buffer's growth
	// past a pooled buffer at most: not a writer's 0.8 MB of state.
	require.LessOrEqual(t, allocs, 4.0)
}

// The zstd encoder is reused by the next request that asks for its
// window, and what it makes is the same; another window gets an encoder
// of its own, which is kept in its place.
func TestZstdEncoderKept(t *testing.T) {
	var c keptWriter[*zstd.Encoder]
	raw := counters(t, 100)
	first, err := c.get(zstdMaxWindow, newZstd(zstdMaxWindow))
	require.NoError(t, err)
	want := first.EncodeAll(raw, nil)
	c.put(first, zstdMaxWindow)
	again, err := c.get(zstdMaxWindow, newZstd(zstdMaxWindow))
	require.NoError(t, err)
	require.Same(t, first, again, "an encoder put back is the next one")
	require.Equal(t, want, again.EncodeAll(raw, nil))
	busy, err := c.get(zstdMaxWindow, newZstd(zstdMaxWindow))
	require.NoError(t, err)
	require.NotSame(t, again, busy, "an encoder in use is not handed out")
	c.put(again, zstdMaxWindow)
	other, err := c.get(64<<10, newZstd(64<<10))
	require.NoError(t, err)
	require.NotSame(t, first, other, "an encoder of another window is made anew")
	var h zstd.Header
	require.NoError(t, h.Decode(other.EncodeAll(counters(t, 20000), nil)))
	require.Equal(t, uint64(64<<10), h.WindowSize)
	c.put(other, 64<<10)
	kept, err := c.get(64<<10, newZstd(64<<10))
	require.NoError(t, err)
	require.Same(t, other, kept, "the last one put back is kept")
	fresh, err := c.get(zstdMaxWindow, newZstd(zstdMaxWindow))
	require.NoError(t, err)
	require.NotSame(t, first, fresh)
	require.Equal(t, want, fresh.EncodeAll(raw, nil))
}

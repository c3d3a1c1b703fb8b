// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"strconv"
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request written in several chunkBytes blocks is one snappy block that
// golang/snappy (what Prometheus decodes with) reads back whole, series in
// order, and it is what golang/snappy makes of the whole request.
func TestRequestCompressedInChunks(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxSamplesPerSend = 20_000
	md := batch(7, 20_000) // about 1.2 MB raw: 19 blocks
	req, err := newTranslator(cfg).translate(md)
	require.NoError(t, err)
	require.Len(t, req.payloads, 1)
	assert.Equal(t, []int{20_000}, req.samples)
	raw, err := snappy.Decode(nil, req.payloads[0])
	require.NoError(t, err)
	require.Greater(t, len(raw), 10*chunkBytes)
	var wr prompb.WriteRequest
	require.NoError(t, wr.Unmarshal(raw))
	require.Len(t, wr.Timeseries, 20_000)
	for i, ts := range wr.Timeseries {
		assert.Equal(t, []prompb.Label{{Name: "__name__", Value: "test_value"}, {Name: "batch", Value: "7"}, {Name: "series", Value: strconv.Itoa(i)}}, ts.Labels)
		assert.Equal(t, []prompb.Sample{{Value: 7, Timestamp: 1_700_000_007_000}}, ts.Samples)
	}
	assert.Equal(t, snappy.Encode(nil, raw), req.payloads[0], "compressed in chunks, byte for byte what golang/snappy makes of the whole request")
}

// Requests cut at max_batch_size_bytes across chunk boundaries each decode
// alone, and together hold every series once, in order.
func TestRequestsCutAcrossChunks(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxBatchSizeBytes = 3*chunkBytes + 777
	cfg.MaxSamplesPerSend = 30_000 // cut by bytes only
	req, err := newTranslator(cfg).translate(batch(1, 30_000))
	require.NoError(t, err)
	require.Greater(t, len(req.payloads), 5)
	next := 0
	for i, p := range req.payloads {
		raw, err := snappy.Decode(nil, p)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(raw), cfg.MaxBatchSizeBytes)
		var wr prompb.WriteRequest
		require.NoError(t, wr.Unmarshal(raw))
		assert.Len(t, wr.Timeseries, req.samples[i])
		for _, ts := range wr.Timeseries {
			require.Equal(t, strconv.Itoa(next), ts.Labels[2].Value)
			next++
		}
	}
	assert.Equal(t, 30_000, next)
}

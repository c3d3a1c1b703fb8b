// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"
)

// A request written in several chunkBytes blocks is one snappy block that
// golang/snappy (what Prometheus decodes with) reads back whole, series in
// order, and it is what golang/snappy makes of the whole request.
func TestRequestCompressedInChunks(t *testing.T) {
	cfg := DefaultSettings()
	cfg.MaxSamplesPerSend = 20_000
	md := otlptest.Batch(7, 20_000) // about 1.4 MB raw: 22 blocks
	req, err := New(cfg).Translate(md)
	require.NoError(t, err)
	require.Len(t, req.Payloads, 1)
	assert.Equal(t, []int{20_000}, req.Samples)
	raw, err := snappy.Decode(nil, req.Payloads[0])
	require.NoError(t, err)
	require.Greater(t, len(raw), 10*chunkBytes)
	var wr prompb.WriteRequest
	require.NoError(t, wr.Unmarshal(raw))
	require.Len(t, wr.Timeseries, 20_000)
	for i, ts := range wr.Timeseries {
		assert.Equal(t, []prompb.Label{{Name: "__name__", Value: "ernic_test"}, {Name: "ernic_id", Value: "7"}, {Name: "qp", Value: strconv.Itoa(i)}}, ts.Labels)
		assert.Equal(t, []prompb.Sample{{Value: 7, Timestamp: 1_700_000_000_000}}, ts.Samples)
	}
	assert.Equal(t, snappy.Encode(nil, raw), req.Payloads[0], "compressed in chunks, byte for byte what golang/snappy makes of the whole request")
}

// Requests cut at max_batch_size_bytes across chunk boundaries each decode
// alone, and together hold every series once, in order.
func TestRequestsCutAcrossChunks(t *testing.T) {
	cfg := DefaultSettings()
	cfg.MaxBatchSizeBytes = 3*chunkBytes + 777
	cfg.MaxSamplesPerSend = 30_000 // cut by bytes only
	req, err := New(cfg).Translate(otlptest.Batch(1, 30_000))
	require.NoError(t, err)
	require.Greater(t, len(req.Payloads), 5)
	next := 0
	for i, p := range req.Payloads {
		raw, err := snappy.Decode(nil, p)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(raw), cfg.MaxBatchSizeBytes)
		var wr prompb.WriteRequest
		require.NoError(t, wr.Unmarshal(raw))
		assert.Len(t, wr.Timeseries, req.Samples[i])
		for _, ts := range wr.Timeseries {
			require.Equal(t, strconv.Itoa(next), ts.Labels[2].Value)
			next++
		}
	}
	assert.Equal(t, 30_000, next)
}

// Every request is at most max_batch_size_bytes unless it holds a single
// series; staleness bits, ms timestamps, int > 2^53.
func TestRequestsWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("x")
		g := m.SetEmptyGauge()
		n := 1 + rng.IntN(300)
		for i := range n {
			dp := g.DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.Timestamp(1_700_000_000_123_456_789))
			dp.SetIntValue(1<<53 + 1)
			if i%7 == 0 {
				dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
			}
			dp.Attributes().PutStr("i", strings.Repeat("v", rng.IntN(400))+string(rune('a'+i%26))+strings.Repeat("z", i))
		}
		cfg := DefaultSettings()
		cfg.MaxBatchSizeBytes = 50 + rng.IntN(5000)
		req, err := New(cfg).Translate(md)
		require.NoError(t, err)
		total := 0
		for _, p := range req.Payloads {
			raw, err := snappy.Decode(nil, p)
			require.NoError(t, err)
			var wr prompb.WriteRequest
			require.NoError(t, wr.Unmarshal(raw))
			if len(wr.Timeseries) > 1 {
				require.LessOrEqual(t, len(raw), cfg.MaxBatchSizeBytes, "iter %d", iter)
			}
			for _, ts := range wr.Timeseries {
				s := ts.Samples[0]
				require.Equal(t, int64(1_700_000_000_123), s.Timestamp)
				if math.IsNaN(s.Value) {
					require.True(t, value.IsStaleNaN(s.Value))
				} else {
					require.Equal(t, float64(1<<53+1), s.Value)
				}
			}
			total += len(wr.Timeseries)
		}
		require.Equal(t, n, total)
	}
}

// The item bound counts samples, or in bytes what the item can be at most
// once compressed: a series that may take it past the bound overflows, one
// that cannot does not.
func TestOverflowsInBytes(t *testing.T) {
	st := &Batch{CapBytes: 1000, bytes: 500, comp: make([]byte, 100), raw: make([]byte, 200), inRaw: 3}
	// 500 + 100 + snappy's bound on 200+e bytes (32 + n + n/6) + 64.
	assert.False(t, st.overflows(60), "500+100+(32+260+43)+64 = 999")
	assert.True(t, st.overflows(62), "500+100+(32+262+43)+64 = 1001")
	assert.False(t, (&Batch{CapItems: 5, itemsDone: 3, inRaw: 1}).overflows(1000), "4 samples of 5")
	assert.True(t, (&Batch{CapItems: 5, itemsDone: 3, inRaw: 2}).overflows(1), "a 6th sample")
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func FuzzEncodingUnmarshal(f *testing.F) {
	r := newRequest([][]byte{[]byte("abc"), {}, []byte("defgh")}, []int{3, 0, 7})
	b, _ := encoding{}.Marshal(context.Background(), r)
	f.Add(b)
	f.Add([]byte{2, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, req, err := encoding{}.Unmarshal(b)
		if err != nil {
			return
		}
		r := req.(*request)
		if len(r.payloads) != len(r.samples) {
			t.Fatal("mismatch")
		}
		b2, err := encoding{}.Marshal(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		_, req2, err := encoding{}.Unmarshal(b2)
		if err != nil {
			t.Fatal(err)
		}
		r2 := req2.(*request)
		if r2.id != r.id || r2.bytes != r.bytes || r2.ItemsCount() != r.ItemsCount() || len(r2.payloads) != len(r.payloads) {
			t.Fatal("not a round trip")
		}
	})
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
		cfg := createDefaultConfig().(*Config)
		cfg.MaxBatchSizeBytes = 50 + rng.IntN(5000)
		req, err := newTranslator(cfg).translate(md)
		require.NoError(t, err)
		total := 0
		for _, p := range req.payloads {
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

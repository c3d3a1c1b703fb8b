// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	_ "go.opentelemetry.io/collector/config/configgrpc" // registers zstd and snappy with gRPC
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	grpcencoding "google.golang.org/grpc/encoding"
)

// counters is a request of qps QPs × 8 counters of ever larger random
// values, as a receiver's QP counters are, about 50 bytes a point.
func counters(tb testing.TB, qps int) []byte {
	md := pmetric.NewMetrics()
	rng := rand.New(rand.NewPCG(1, 2))
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	for k := range 8 {
		m := ms.AppendEmpty()
		m.SetName("ernic.qp.counter" + strconv.Itoa(k))
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for q := range qps {
			dp := sum.DataPoints().AppendEmpty()
			dp.Attributes().PutStr("qp", strconv.Itoa(q*7+1))
			dp.SetStartTimestamp(1_700_000_000_000_000_000)
			dp.SetTimestamp(1_700_000_300_000_000_000)
			dp.SetIntValue(rng.Int64N(1 << uint(8+4*k)))
		}
	}
	raw, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(tb, err)
	return raw
}

// The zstd frames the queue stores declare a window of at most 512 KiB,
// as configgrpc's encoder does, whatever the request's size, so a server
// that bounds the window it decodes takes them as it took gRPC's.
func TestZstdWindow(t *testing.T) {
	for _, qps := range []int{100, 2500, 20000} {
		raw := counters(t, qps)
		body, err := Compress(Zstd, raw)
		require.NoError(t, err)
		var h zstd.Header
		require.NoError(t, h.Decode(body))
		require.LessOrEqual(t, h.WindowSize, uint64(512<<10), "%d-byte request", len(raw))
		back, err := Decompress(Zstd, body)
		require.NoError(t, err)
		require.Equal(t, raw, back)
	}
}

// BenchmarkCompressZstd compresses a 1.2 MB request side by side with
// configgrpc's registered zstd compressor (what otlp_grpc uses) and with
// Compress; bytes/request is the compressed size.
func BenchmarkCompressZstd(b *testing.B) {
	raw := counters(b, 2500)
	c := grpcencoding.GetCompressor(Zstd)
	b.Run("configgrpc", benchWriter(raw, c.Compress))
	b.Run("Compress", benchCompress(raw, Zstd))
}

// benchWriter compresses raw through the writers open makes.
func benchWriter(raw []byte, open func(io.Writer) (io.WriteCloser, error)) func(*testing.B) {
	return func(b *testing.B) {
		var out bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			out.Reset()
			w, err := open(&out)
			require.NoError(b, err)
			_, err = w.Write(raw)
			require.NoError(b, err)
			require.NoError(b, w.Close())
		}
		b.ReportMetric(float64(out.Len()), "bytes/request")
	}
}

// benchCompress compresses raw with Compress.
func benchCompress(raw []byte, name string) func(*testing.B) {
	return func(b *testing.B) {
		var out []byte
		b.ReportAllocs()
		for b.Loop() {
			var err error
			out, err = Compress(name, raw)
			require.NoError(b, err)
		}
		b.ReportMetric(float64(len(out)), "bytes/request")
	}
}

// BenchmarkCompressGzip compresses the same request side by side with the
// standard library's gzip at level 1 (confighttp's compressor, what
// otlp_http sends with) and with Compress; bytes/request is the
// compressed size.
func BenchmarkCompressGzip(b *testing.B) {
	raw := counters(b, 2500)
	b.Run("compress/gzip", benchWriter(raw, func(w io.Writer) (io.WriteCloser, error) {
		return stdgzip.NewWriterLevel(w, stdgzip.BestSpeed)
	}))
	b.Run("Compress", benchCompress(raw, Gzip))
}

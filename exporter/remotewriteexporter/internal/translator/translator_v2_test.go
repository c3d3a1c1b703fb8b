// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"math"
	"testing"
	"time"

	"github.com/golang/snappy"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/prometheus/prometheus/prompb"
)

// v2Series is a 2.0 series as a receiver reads it.
type v2Series struct {
	labels     string
	value      uint64 // bits: a staleness marker compares too
	ts, start  int64
	typ        writev2.Metadata_MetricType
	help, unit string
}

// decodeV2 decodes each payload alone, as a receiver does (each request
// has a symbol table of its own), and returns its series by labels.
func decodeV2(t *testing.T, payloads [][]byte) map[string]v2Series {
	out := map[string]v2Series{}
	for _, p := range payloads {
		raw, err := snappy.Decode(nil, p)
		require.NoError(t, err)
		var req writev2.Request
		require.NoError(t, req.Unmarshal(raw))
		require.NotEmpty(t, req.Symbols)
		require.Equal(t, "", req.Symbols[0], "the first symbol is the empty string")
		seen := map[string]bool{}
		for _, s := range req.Symbols {
			require.False(t, seen[s], "symbol %q twice in one request", s)
			seen[s] = true
		}
		for _, ts := range req.Timeseries {
			var lbls []prompb.Label
			for i := 0; i < len(ts.LabelsRefs); i += 2 {
				lbls = append(lbls, prompb.Label{Name: req.Symbols[ts.LabelsRefs[i]], Value: req.Symbols[ts.LabelsRefs[i+1]]})
			}
			require.Len(t, ts.Samples, 1)
			s := v2Series{
				labels: labelsText(lbls), value: math.Float64bits(ts.Samples[0].Value),
				ts: ts.Samples[0].Timestamp, start: ts.Samples[0].StartTimestamp,
				typ: ts.Metadata.Type, help: req.Symbols[ts.Metadata.HelpRef], unit: req.Symbols[ts.Metadata.UnitRef],
			}
			out[s.labels] = s
		}
	}
	return out
}

// withStartAndHelp sets a start time on every sum point and a help text
// on every metric.
func withStartAndHelp(md pmetric.Metrics, start time.Time) pmetric.Metrics {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		ms := rms.At(i).ScopeMetrics().At(0).Metrics()
		for j := range ms.Len() {
			m := ms.At(j)
			m.SetDescription("help of " + m.Name())
			if m.Type() == pmetric.MetricTypeSum {
				for k := range m.Sum().DataPoints().Len() {
					m.Sum().DataPoints().At(k).SetStartTimestamp(pcommon.NewTimestampFromTime(start))
				}
			}
		}
	}
	return md
}

// A 2.0 request holds the series and samples the 1.0 request holds, with
// each series' type, unit and help, and a counter's start timestamp; cut
// at both bounds, each request reads alone.
func TestTranslateV2MatchesV1(t *testing.T) {
	start := time.Unix(1_699_999_000, 500_000_000)
	md := withStartAndHelp(receiverLike(50), start)
	cfg := DefaultSettings()
	cfg.MaxSamplesPerSend = 7
	v1, err := New(cfg).Translate(md)
	require.ErrorContains(t, err, "4 points not sent")
	cfg.Protocol = ProtocolV2
	req, err := New(cfg).Translate(md)
	require.ErrorContains(t, err, "4 points not sent")
	assert.Equal(t, ProtocolV2, req.Protocol)
	assert.Equal(t, v1.Samples, req.Samples, "the same cuts")
	for _, n := range req.Samples {
		assert.LessOrEqual(t, n, 7)
	}

	got := decodeV2(t, req.Payloads)
	want := decoded(t, v1.Payloads)
	require.Len(t, got, len(want))
	for k, samples := range want {
		s, ok := got[k]
		require.True(t, ok, "series %s missing", k)
		assert.Equal(t, math.Float64bits(samples[0].Value), s.value, k)
		assert.Equal(t, samples[0].Timestamp, s.ts, k)
	}
	counter := got[`__name__="ernic_qp_bytes_sent_total",ernic_id="2",qp="0",role="worker",`]
	assert.Equal(t, v2Series{labels: counter.labels, value: math.Float64bits(0), ts: 1_700_000_000_123, start: 1_699_999_000_500,
		typ: writev2.Metadata_METRIC_TYPE_COUNTER, help: "help of ernic.qp.bytes.sent", unit: "bytes"}, counter)
	gauge := got[`__name__="ernic_instance_uptime_seconds",`]
	assert.Equal(t, v2Series{labels: gauge.labels, value: math.Float64bits(12.25), ts: 1_700_000_000_123,
		typ: writev2.Metadata_METRIC_TYPE_GAUGE, help: "help of ernic.instance.uptime", unit: "seconds"}, gauge)
	// A cumulative sum that is not monotonic is a gauge: no start time.
	nonMono := got[`__name__="ernic_qp_count",`]
	assert.Equal(t, writev2.Metadata_METRIC_TYPE_GAUGE, nonMono.typ)
	assert.Zero(t, nonMono.start)
}

// Request bytes per sample of 1.0 and 2.0 on a receiver-shaped 16x64
// scrape, compressed as sent (docs/performance-pipelines.md).
func BenchmarkRequestBytesPerSample(b *testing.B) {
	md := withStartAndHelp(hostLike(16, 64), time.Unix(1_699_999_000, 0))
	for _, proto := range []Protocol{ProtocolV1, ProtocolV2} {
		name := map[Protocol]string{ProtocolV1: MessageV1, ProtocolV2: MessageV2}[proto]
		b.Run(name, func(b *testing.B) {
			cfg := DefaultSettings()
			cfg.Protocol = proto
			tr := New(cfg)
			var req Requests
			b.ReportAllocs()
			for b.Loop() {
				req, _ = tr.Translate(md)
			}
			bytes, samples := 0, 0
			for i, p := range req.Payloads {
				bytes, samples = bytes+len(p), samples+req.Samples[i]
			}
			b.ReportMetric(float64(bytes)/float64(samples), "bytes/sample")
			b.ReportMetric(float64(len(req.Payloads)), "requests")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(samples), "ns/point")
		})
	}
}

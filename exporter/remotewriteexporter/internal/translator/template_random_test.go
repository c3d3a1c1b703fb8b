// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Randomised checks of the series templates kept between batches: the
// template path against the general one, shared across goroutines, and
// payloads that outlive the pooled buffers.

package translator

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// seriesText returns every series of payloads, in order, as text.
func seriesText(t *testing.T, payloads [][]byte) []string {
	var out []string
	forEachSeries(t, payloads, func(ts prompb.TimeSeries) {
		out = append(out, fmt.Sprintf("%s %v", labelsText(ts.Labels), sampleBits(ts.Samples)))
	})
	return out
}

var randomKeys = []string{"qp", "a.b", "a_b", "job", "instance", "role", "ernic.id", "ernic_id", "__name__", "0x", "service.name", "cluster", "x", "host.name"}
var randomValues = []string{"", "1", "2", "w"}

func randomBatch(r *rand.Rand) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for range 1 + r.IntN(3) {
		rm := md.ResourceMetrics().AppendEmpty()
		ra := rm.Resource().Attributes()
		for _, k := range []string{"service.name", "service.namespace", "service.instance.id"} {
			if r.IntN(2) == 0 {
				ra.PutStr(k, randomValues[r.IntN(len(randomValues))])
			}
		}
		for range r.IntN(3) {
			ra.PutStr(randomKeys[r.IntN(len(randomKeys))], randomValues[r.IntN(len(randomValues))])
		}
		if r.IntN(3) == 0 {
			ra.PutInt("ernic.id", int64(r.IntN(3)))
		}
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for range 1 + r.IntN(3) {
			m := ms.AppendEmpty()
			m.SetName([]string{"ernic.a", "ernic.b", "ernic_a"}[r.IntN(3)])
			var dps pmetric.NumberDataPointSlice
			if r.IntN(2) == 0 {
				dps = m.SetEmptyGauge().DataPoints()
			} else {
				s := m.SetEmptySum()
				s.SetIsMonotonic(true)
				s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
				dps = s.DataPoints()
			}
			keys := r.Perm(len(randomKeys))[:r.IntN(4)]
			for i := range 1 + r.IntN(5) {
				dp := dps.AppendEmpty()
				dp.SetIntValue(int64(i))
				dp.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + i))
				ks := keys
				if r.IntN(4) == 0 { // another order, or other keys
					ks = r.Perm(len(randomKeys))[:r.IntN(4)]
				}
				for _, k := range ks {
					switch r.IntN(6) {
					case 0:
						dp.Attributes().PutInt(randomKeys[k], int64(r.IntN(2)))
					case 1:
						dp.Attributes().PutBool(randomKeys[k], r.IntN(2) == 0)
					case 2:
						dp.Attributes().PutEmpty(randomKeys[k])
					case 3:
						dp.Attributes().PutEmptySlice(randomKeys[k]).AppendEmpty().SetStr("s")
					default:
						dp.Attributes().PutStr(randomKeys[k], randomValues[r.IntN(len(randomValues))])
					}
				}
				if r.IntN(5) == 0 {
					dp.Attributes().PutStr("dupA", "d1")
					dp.Attributes().PutStr("dupB", "d2")
				}
				switch r.IntN(8) {
				case 0:
					dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
				case 1:
					dps.At(i).SetDoubleValue(1.5)
				case 2:
					dp.SetFlags(0)
					dp.SetIntValue(3)
				}
			}
		}
	}
	return md
}

// Random batches through one translator (templates cached from batch to
// batch) give exactly the series of the general path.
func TestTemplateCacheRandomDifferential(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		cfg := DefaultSettings()
		cfg.ResourceToTelemetryConversion = r.IntN(2) == 0
		if r.IntN(2) == 0 {
			cfg.ExternalLabels = map[string]string{"cluster": "c", "qp": "ext", "job": "ej"}
		}
		fast := New(cfg)
		general := New(cfg)
		general.noTemplates = true
		for b := range 60 {
			md := withDuplicateKeys(t, randomBatch(r))
			want, errW := general.Translate(md)
			got, errG := fast.Translate(md)
			require.Equal(t, errW, errG)
			require.Equal(t, seriesText(t, want.Payloads), seriesText(t, got.Payloads), "seed %d batch %d promote %v", seed, b, cfg.ResourceToTelemetryConversion)
		}
	}
}

// withDuplicateKeys renames attribute dupB to dupA on the wire: a point
// then has the key dupA twice, as a batch decoded from OTLP can.
func withDuplicateKeys(t *testing.T, md pmetric.Metrics) pmetric.Metrics {
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	require.NoError(t, err)
	b = bytes.ReplaceAll(b, []byte("dupB"), []byte("dupA"))
	out, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
	require.NoError(t, err)
	return out
}

// Random batches translated at once by one translator (shared cache, its
// sweep included) give the series of the general path.
func TestTemplateCacheConcurrentRandom(t *testing.T) {
	for _, promote := range []bool{false, true} {
		cfg := DefaultSettings()
		cfg.ResourceToTelemetryConversion = promote
		cfg.ExternalLabels = map[string]string{"cluster": "c", "qp": "ext"}
		general := New(cfg)
		general.noTemplates = true
		r := rand.New(rand.NewPCG(11, 13))
		var batches []pmetric.Metrics
		var want [][]string
		for range 30 {
			md := withDuplicateKeys(t, randomBatch(r))
			w, _ := general.Translate(md)
			batches = append(batches, md)
			want = append(want, seriesText(t, w.Payloads))
		}
		shared := New(cfg)
		done := make(chan struct{})
		for g := range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := range 100 {
					b := (g*7 + i) % len(batches)
					got, _ := shared.Translate(batches[b])
					assert.Equal(t, want[b], seriesText(t, got.Payloads))
				}
			}()
		}
		for range 4 {
			<-done
		}
	}
}

// A batch's payloads stay as they were while later batches reuse the pooled
// buffers.
func TestPayloadsNotAliased(t *testing.T) {
	cfg := DefaultSettings()
	cfg.MaxBatchSizeBytes = 4096
	tr := New(cfg)
	r := rand.New(rand.NewPCG(5, 5))
	first, _ := tr.Translate(receiverLike(400)) // receiverLike has untranslatable metrics
	require.Greater(t, len(first.Payloads), 2)
	var saved [][]byte
	for _, p := range first.Payloads {
		saved = append(saved, bytes.Clone(p))
	}
	for range 50 {
		_, _ = tr.Translate(randomBatch(r))
		_, _ = tr.Translate(receiverLike(50 + r.IntN(400)))
	}
	require.Equal(t, saved, first.Payloads)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// templateBatch has, per resource, metrics whose points fit a template and
// points that do not: an empty value, other keys, keys in another order,
// keys that collide with each other or with a resource label, a key the
// resource has, keys that are no label name.
func templateBatch() pmetric.Metrics {
	md := receiverLike(40)
	for _, res := range []map[string]string{nil, {"ernic.id": "3", "role": "worker"}, {"service.name": "svc", "service.instance.id": "h1", "qp": "r"}} {
		rm := md.ResourceMetrics().AppendEmpty()
		for k, v := range res {
			rm.Resource().Attributes().PutStr(k, v)
		}
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for _, keys := range [][]string{{"qp"}, {"qp", "opcode"}, {"a.b", "a_b"}, {"ernic_id"}, {"role", "qp"}, {"__name__", "qp"}, {"0x", "job"}} {
			m := ms.AppendEmpty()
			m.SetName(fmt.Sprintf("ernic.test.%d", ms.Len()))
			dps := m.SetEmptyGauge().DataPoints()
			for i := range 6 {
				dp := dps.AppendEmpty()
				dp.SetIntValue(int64(i))
				dp.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + i))
				order := keys
				if i == 4 && len(keys) > 1 {
					order = []string{keys[1], keys[0]}
				}
				for j, k := range order {
					v := fmt.Sprint(i*10 + j)
					if i == 2 {
						v = "" // an empty value: no label
					}
					dp.Attributes().PutStr(k, v)
				}
				if i == 5 {
					dp.Attributes().PutStr("extra", "e")
				}
			}
		}
	}
	return md
}

// The labels a template fills in are those of the general path, for every
// point, with every setting that changes them.
func TestTemplateMatchesGeneral(t *testing.T) {
	for _, promote := range []bool{false, true} {
		for _, ext := range []map[string]string{nil, {"cluster": "c1", "qp": "ext"}} {
			t.Run(fmt.Sprintf("promote=%v,external=%v", promote, ext), func(t *testing.T) {
				cfg := DefaultSettings()
				cfg.ResourceToTelemetryConversion = promote
				cfg.ExternalLabels = ext
				md := templateBatch()
				fast := New(cfg)
				general := New(cfg)
				general.noTemplates = true
				b, errB := general.Translate(md)
				want := decoded(t, b.Payloads)
				// The first batch makes the templates, the second
				// takes them from the cache.
				for round := range 2 {
					a, errA := fast.Translate(md)
					require.Equal(t, errB, errA)
					got := decoded(t, a.Payloads)
					for k, v := range want {
						if g, ok := got[k]; !ok {
							t.Errorf("round %d: template path lacks %s", round, k)
						} else {
							assert.Equal(t, sampleBits(v), sampleBits(g), k)
						}
					}
					for k := range got {
						if _, ok := want[k]; !ok {
							t.Errorf("round %d: template path has %s, the general one not", round, k)
						}
					}
					assert.Greater(t, len(got), 150)
				}
			})
		}
	}
}

// sampleBits are the samples' values as bits (a staleness marker is a NaN,
// unequal to itself) and timestamps.
func sampleBits(samples []prompb.Sample) [][2]int64 {
	var out [][2]int64
	for _, s := range samples {
		out = append(out, [2]int64{int64(math.Float64bits(s.Value)), s.Timestamp})
	}
	return out
}

// A template is kept while batches use it and let go once sweepCalls
// translate calls passed without one; a template of another resource is
// another template.
func TestTemplateCacheSweep(t *testing.T) {
	tr := New(DefaultSettings())
	a, b := hostLike(1, 4), hostLike(2, 4)
	_, err := tr.Translate(a)
	require.NoError(t, err)
	one := len(tr.templates.byKey)
	require.Positive(t, one)
	_, err = tr.Translate(b) // instance 1 again, and instance 2
	require.NoError(t, err)
	assert.Equal(t, 2*one, len(tr.templates.byKey))
	for range 2 * sweepCalls {
		_, err = tr.Translate(a)
		require.NoError(t, err)
	}
	assert.Equal(t, one, len(tr.templates.byKey), "instance 2's templates outlived the sweep")
}

// Batches translated at once by one translator share its templates and
// give each its own, right, series (go test -race checks the sharing).
func TestTemplateCacheConcurrent(t *testing.T) {
	cfg := DefaultSettings()
	shared := New(cfg)
	batches := []pmetric.Metrics{hostLike(3, 8), templateBatch(), hostLike(5, 2)}
	want := make([]map[string][]prompb.Sample, len(batches))
	for i, md := range batches {
		r, _ := New(cfg).Translate(md)
		want[i] = decoded(t, r.Payloads)
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for range 20 {
				i := g % len(batches)
				r, _ := shared.Translate(batches[i])
				got := decoded(t, r.Payloads)
				assert.Len(t, got, len(want[i]))
				for k, v := range want[i] {
					assert.Equal(t, sampleBits(v), sampleBits(got[k]), k)
				}
			}
		})
	}
	wg.Wait()
}

// The cache starts anew when it would hold more than maxTemplates.
func TestTemplateCacheBound(t *testing.T) {
	var c templateCache
	for i := range maxTemplates + 10 {
		c.get(fmt.Appendf(nil, "k%d", i), func() *seriesTemplate { return nil })
	}
	assert.Equal(t, 10, len(c.byKey))
}

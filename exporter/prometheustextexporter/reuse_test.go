// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter

import (
	"bufio"
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter/internal/metadata"
)

// batchOf is one resource (ernic.id 1) with one QP counter point of value v
// on each of qps QPs.
func batchOf(v int64, qps int) pmetric.Metrics {
	md := hostBatch(1, qps)
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := range ms.Len() {
		dps := ms.At(i).Sum().DataPoints()
		for j := range dps.Len() {
			dps.At(j).SetIntValue(v)
		}
	}
	return md
}

// writeAll is what a GET of rs writes, without gzip.
func writeAll(t *testing.T, rs []*rendered) string {
	t.Helper()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	require.NoError(t, write(w, rs))
	return out.String()
}

// A batch a GET is writing is never rendered into: the GET sees it whole
// however many batches replace it meanwhile; once no GET writes it, the
// resource's next batches are rendered into it and the one before, and
// every GET serves exactly the latest batch.
func TestBatchReusedOnlyWhenNotServed(t *testing.T) {
	e := newExporter(exportertest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
	ctx := context.Background()
	want := func(v int64, qps int) string {
		f := newExporter(exportertest.NewNopSettings(metadata.Type), createDefaultConfig().(*Config))
		require.NoError(t, f.ConsumeMetrics(ctx, batchOf(v, qps)))
		rs := f.current()
		defer done(rs)
		return writeAll(t, rs)
	}

	require.NoError(t, e.ConsumeMetrics(ctx, batchOf(1, 4)))
	held := e.current() // a GET under way
	first := writeAll(t, held)
	require.Equal(t, want(1, 4), first)
	for v := int64(2); v <= 4; v++ {
		require.NoError(t, e.ConsumeMetrics(ctx, batchOf(v, 8)))
	}
	assert.Equal(t, first, writeAll(t, held), "the held batch is unchanged")
	done(held)

	for v := int64(5); v <= 7; v++ {
		prev := e.current()
		done(prev)
		spare := e.kept[e.onlyKey(t)].spare
		require.NoError(t, e.ConsumeMetrics(ctx, batchOf(v, 3+int(v)%2)))
		rs := e.current()
		if spare != nil {
			assert.Same(t, spare, rs[0], "rendered into the batch before the last")
		}
		assert.Same(t, prev[0], e.kept[e.onlyKey(t)].spare, "the replaced batch, not served, is the next spare")
		assert.Equal(t, want(v, 3+int(v)%2), writeAll(t, rs))
		done(rs)
	}
}

// onlyKey is the key of the exporter's only resource.
func (e *textExporter) onlyKey(t *testing.T) uint64 {
	t.Helper()
	require.Len(t, e.kept, 1)
	for k := range e.kept {
		return k
	}
	return 0
}

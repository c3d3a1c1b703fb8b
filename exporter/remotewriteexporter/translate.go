// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
)

// translator follows contrib's pkg/translator/prometheusremotewrite
// (TestTranslateMatchesContrib), but writes the series straight from the
// batch instead of through contrib's map of series, which cost too much
// CPU on a large host (docs/performance-pipelines.md).
type translator struct {
	external []prompb.Label // sorted by name
	maxBytes int
	// maxSamples is max_samples_per_send.
	maxSamples int
	// proto is what new requests are written in: 1.0 after a fallback.
	proto atomic.Uint32
	names *promname.Namer
	// promote is resource_to_telemetry_conversion.
	promote bool
	// noTemplates: tests compare both paths.
	noTemplates bool
	// templates are kept between batches.
	templates templateCache
}

func newTranslator(cfg *Config) *translator {
	t := &translator{
		maxBytes:   cfg.MaxBatchSizeBytes,
		maxSamples: cfg.MaxSamplesPerSend,
		names:      promname.New(),
		promote:    cfg.ResourceToTelemetryConversion.Enabled,
	}
	for k, v := range cfg.ExternalLabels {
		t.external = append(t.external, prompb.Label{Name: k, Value: v})
	}
	slices.SortFunc(t.external, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	t.proto.Store(uint32(protocolV1))
	if cfg.ProtobufMessage == messageV2 {
		t.proto.Store(uint32(protocolV2))
	}
	return t
}

// translate returns md's requests and an error counting the points left out.
func (t *translator) translate(md pmetric.Metrics) (*request, error) {
	st := t.begin()
	skipped := t.add(st, md)
	return t.end(st), skipped.err()
}

// begin starts one queue item on pooled buffers.
func (t *translator) begin() *batchState {
	bufs, ok := bufferPool.Get().(*buffers)
	if !ok {
		bufs = &buffers{raw: make([]byte, 0, min(t.maxBytes, chunkBytes)+1024)}
	}
	st := &batchState{bufs: bufs, raw: bufs.raw[:0], comp: bufs.comp[:0], blockEnds: bufs.blockEnds[:0], proto: protocol(t.proto.Load())}
	if st.proto == protocolV2 {
		if bufs.sym == nil {
			bufs.sym = &symbolTable{}
		}
		st.sym = bufs.sym
		st.sym.reset()
	}
	return st
}

// add translates md into st after what it holds: a WriteRequest is its
// repeated series, so several batches make one request. It returns the
// points left out.
func (t *translator) add(st *batchState, md pmetric.Metrics) untranslated {
	t.templates.tick()
	before := st.skipped
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		base := t.resourceLabels(rm.Resource())
		labels := t.names.NewPointLabels(rm.Resource().Attributes(), t.promote, true)
		st.resLabels = st.resLabels[:0]
		for _, l := range labels.Resource() {
			st.resLabels = append(st.resLabels, prompb.Label{Name: l.Name, Value: l.Value})
		}
		sms := rm.ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				t.addMetric(st, ms.At(k), rm.Resource().Attributes(), labels, base)
			}
		}
	}
	return st.skipped.minus(before)
}

// end returns st's requests and pools its buffers; st is done.
func (t *translator) end(st *batchState) *request {
	st.flush()
	st.bufs.raw, st.bufs.comp, st.bufs.blockEnds = st.raw, st.comp, st.blockEnds
	bufferPool.Put(st.bufs)
	st.bufs = nil
	r := newRequest(st.payloads, st.samples)
	r.proto = st.proto
	return r
}

// resourceLabels returns job and instance from the resource, sorted.
func (t *translator) resourceLabels(res pcommon.Resource) []prompb.Label {
	var out []prompb.Label
	attrs := res.Attributes()
	if name, ok := attrs.Get("service.name"); ok && name.AsString() != "" {
		job := name.AsString()
		if ns, ok := attrs.Get("service.namespace"); ok {
			job = ns.AsString() + "/" + job
		}
		out = append(out, prompb.Label{Name: "job", Value: job})
	}
	if id, ok := attrs.Get("service.instance.id"); ok && id.AsString() != "" {
		out = append(out, prompb.Label{Name: "instance", Value: id.AsString()})
	}
	slices.SortFunc(out, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (t *translator) addMetric(st *batchState, m pmetric.Metric, res pcommon.Map, labels *promname.PointLabels, base []prompb.Label) {
	name, typ, dps, ok := t.names.Family(m)
	if !ok {
		st.skipped.metricRefused(m)
		return
	}
	var tmpl *seriesTemplate
	tried := t.noTemplates
	var meta seriesMeta
	if st.sym != nil { // 2.0: the general path, with the metric's metadata
		tried, meta = true, metaOf(st, typ, m.Unit(), m.Description())
	}
	for i := range dps.Len() {
		dp := dps.At(i)
		var v float64
		switch {
		case dp.Flags().NoRecordedValue():
			v = math.Float64frombits(value.StaleNaN)
		case dp.ValueType() == pmetric.NumberDataPointValueTypeInt:
			v = float64(dp.IntValue())
		case dp.ValueType() == pmetric.NumberDataPointValueTypeDouble:
			v = dp.DoubleValue()
		default:
			st.skipped[noValue]++
			continue
		}
		ms := int64(dp.Timestamp()) / 1e6
		if !tried {
			// The first point chooses the template; others that do not fit take the general path.
			tried = true
			st.key = t.templateKey(st.key[:0], name, dp.Attributes(), res, st.resLabels, base)
			tmpl = t.templates.get(st.key, func() *seriesTemplate {
				return t.newTemplate(name, dp.Attributes(), res, st.resLabels, base)
			})
			if tmpl != nil {
				st.values = slices.Grow(st.values[:0], len(tmpl.names))[:len(tmpl.names)]
			}
		}
		if tmpl != nil && tmpl.fill(dp.Attributes(), st.values) {
			t.appendSeriesOf(st, tmpl, st.values, v, ms)
			continue
		}
		lbls := append(st.labels[:0], prompb.Label{Name: "__name__", Value: name})
		for _, l := range labels.Of(dp.Attributes()) {
			lbls = append(lbls, prompb.Label{Name: l.Name, Value: l.Value})
		}
		lbls = appendMissing(lbls, 0, base)
		lbls = appendMissing(lbls, 0, t.external)
		st.labels = lbls
		lbls = st.order.sorted(lbls)
		if hasDuplicate(lbls) {
			lbls = mergeDuplicates(lbls)
		}
		if st.sym != nil {
			start := int64(0)
			if typ == promname.Counter {
				start = int64(dp.StartTimestamp()) / 1e6
			}
			t.appendSeriesV2(st, lbls, meta, v, ms, start)
			continue
		}
		t.appendSeries(st, lbls, v, ms)
	}
}

// appendSeries writes one prompb.TimeSeries field by field with protowire:
// building prompb structs and marshalling them was most of remote write's
// CPU (docs/performance-pipelines.md).
func (t *translator) appendSeries(st *batchState, lbls []prompb.Label, v float64, ms int64) {
	size := sampleFieldSize(ms)
	for _, l := range lbls {
		size += fieldSize(labelSize(l))
	}
	entry := fieldSize(size)
	t.makeRoom(st, entry)
	b := protowire.AppendTag(st.raw, 1, protowire.BytesType) // WriteRequest.timeseries
	b = protowire.AppendVarint(b, uint64(size))
	for _, l := range lbls {
		b = appendLabelField(b, l) // TimeSeries.labels
	}
	st.raw = appendSample(b, v, ms) // TimeSeries.samples
	st.added()
}

// appendSeriesOf is appendSeries for a filled template.
func (t *translator) appendSeriesOf(st *batchState, tp *seriesTemplate, values []string, v float64, ms int64) {
	size := tp.labelsSize(values) + sampleFieldSize(ms)
	entry := fieldSize(size)
	t.makeRoom(st, entry)
	b := protowire.AppendTag(st.raw, 1, protowire.BytesType) // WriteRequest.timeseries
	b = protowire.AppendVarint(b, uint64(size))
	b = tp.appendLabels(b, values)
	st.raw = appendSample(b, v, ms)
	st.added()
}

// makeRoom spills the item or ends the request before a series that would
// take either past its bound.
func (t *translator) makeRoom(st *batchState, entry int) {
	if st.spill != nil && st.overflows(entry) {
		st.spill(st)
	}
	if st.rawSize() > 0 && (st.rawSize()+entry > t.maxBytes || st.inRaw >= t.maxSamples) {
		st.flush()
	}
}

func appendSample(b []byte, v float64, ms int64) []byte {
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sampleSize(ms)))
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(v))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(ms))
}

func labelSize(l prompb.Label) int {
	n := 0
	if l.Name != "" {
		n += 1 + protowire.SizeBytes(len(l.Name))
	}
	if l.Value != "" {
		n += 1 + protowire.SizeBytes(len(l.Value))
	}
	return n
}

func sampleSize(ms int64) int { return 1 + 8 + 1 + protowire.SizeVarint(uint64(ms)) }

func sampleFieldSize(ms int64) int { return fieldSize(sampleSize(ms)) }

// fieldSize is a length-delimited field's size, with a one-byte tag.
func fieldSize(n int) int { return 1 + protowire.SizeBytes(n) }

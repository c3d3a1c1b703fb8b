// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package translator writes metrics into snappy-compressed remote-write
// requests, 1.0 or 2.0, straight from the batch.
package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

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

// Translator follows contrib's pkg/translator/prometheusremotewrite
// (TestTranslateMatchesContrib), but writes the series straight from the
// batch instead of through contrib's map of series, which cost too much
// CPU on a large host (docs/performance-pipelines.md).
type Translator struct {
	labeling
	maxBytes int
	// maxSamples is max_samples_per_send.
	maxSamples int
	// proto is what new requests are written in: 1.0 after a fallback.
	proto atomic.Uint32
	// noTemplates: tests compare both paths.
	noTemplates bool
	// templates are kept between batches.
	templates templateCache
}

// Settings are the exporter's settings that the translation follows.
type Settings struct {
	// ExternalLabels override a label of the same name from the data.
	ExternalLabels map[string]string
	// MaxBatchSizeBytes bounds a request before compression.
	MaxBatchSizeBytes int
	// MaxSamplesPerSend bounds a request's samples.
	MaxSamplesPerSend int
	// Protocol is what requests are written in until a fallback.
	Protocol Protocol
	// ResourceToTelemetryConversion makes resource attributes labels.
	ResourceToTelemetryConversion bool
}

// DefaultSettings are the remote_write exporter's defaults: 1.0, requests
// of at most 3 MB before compression and 2000 samples (Prometheus 3's
// max_samples_per_send), resource attributes as labels.
func DefaultSettings() Settings {
	return Settings{MaxBatchSizeBytes: 3_000_000, MaxSamplesPerSend: 2000, Protocol: ProtocolV1, ResourceToTelemetryConversion: true}
}

// New returns a translator with s.
func New(s Settings) *Translator {
	t := &Translator{
		labeling: labeling{
			names:   promname.New(),
			promote: s.ResourceToTelemetryConversion,
		},
		maxBytes:   s.MaxBatchSizeBytes,
		maxSamples: s.MaxSamplesPerSend,
	}
	for k, v := range s.ExternalLabels {
		t.external = append(t.external, prompb.Label{Name: k, Value: v})
	}
	slices.SortFunc(t.external, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	t.proto.Store(uint32(ProtocolV1))
	if s.Protocol == ProtocolV2 {
		t.proto.Store(uint32(ProtocolV2))
	}
	return t
}

// Protocol is what new requests are written in; the sender stores
// ProtocolV1 in it when the endpoint does not take 2.0.
func (t *Translator) Protocol() *atomic.Uint32 { return &t.proto }

// Translate returns md's requests and an error counting the points left out.
func (t *Translator) Translate(md pmetric.Metrics) (Requests, error) {
	st := t.Begin()
	skipped := t.add(st, md)
	return t.End(st), skipped.err()
}

// Begin starts one queue item on pooled buffers.
func (t *Translator) Begin() *Batch {
	bufs, ok := bufferPool.Get().(*buffers)
	if !ok {
		bufs = &buffers{raw: make([]byte, 0, min(t.maxBytes, chunkBytes)+1024)}
	}
	st := &Batch{bufs: bufs, raw: bufs.raw[:0], comp: bufs.comp[:0], blockEnds: bufs.blockEnds[:0], proto: Protocol(t.proto.Load())}
	if st.proto == ProtocolV2 {
		if bufs.sym == nil {
			bufs.sym = &symbolTable{}
		}
		st.sym = bufs.sym
		st.sym.reset()
	}
	return st
}

// Add translates md into st after what it holds: a WriteRequest is its
// repeated series, so several batches make one request. The error counts
// the points left out.
func (t *Translator) Add(st *Batch, md pmetric.Metrics) error {
	return t.add(st, md).err()
}

// add is Add, returning the points left out.
func (t *Translator) add(st *Batch, md pmetric.Metrics) untranslated {
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

// End returns st's requests and pools its buffers; st is done.
func (t *Translator) End(st *Batch) Requests {
	st.flush()
	st.bufs.raw, st.bufs.comp, st.bufs.blockEnds = st.raw, st.comp, st.blockEnds
	bufferPool.Put(st.bufs)
	st.bufs = nil
	return Requests{Payloads: st.payloads, Samples: st.samples, Protocol: st.proto}
}

// resourceLabels returns job and instance from the resource, sorted.
func (t *Translator) resourceLabels(res pcommon.Resource) []prompb.Label {
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

func (t *Translator) addMetric(st *Batch, m pmetric.Metric, res pcommon.Map, labels *promname.PointLabels, base []prompb.Label) {
	name, typ, dps, ok := t.names.Family(m)
	if !ok {
		st.skipped.metricRefused(m)
		return
	}
	var tmpl *seriesTemplate
	tried := t.noTemplates
	var meta seriesMeta
	if st.sym != nil { // 2.0: the general path, with the metric's metadata
		tried, meta = true, st.sym.meta(typ, m.Unit(), m.Description())
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
func (t *Translator) appendSeries(st *Batch, lbls []prompb.Label, v float64, ms int64) {
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
func (t *Translator) appendSeriesOf(st *Batch, tp *seriesTemplate, values []string, v float64, ms int64) {
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
func (t *Translator) makeRoom(st *Batch, entry int) {
	if st.Spill != nil && st.overflows(entry) {
		st.Spill(st)
	}
	if st.rawSize() > 0 && (st.rawSize()+entry > t.maxBytes || st.inRaw >= t.maxSamples) {
		st.flush()
	}
}

// appendSeriesV2 writes one 2.0 TimeSeries and its new symbols; startMs 0: none.
func (t *Translator) appendSeriesV2(st *Batch, lbls []prompb.Label, meta seriesMeta, v float64, ms, startMs int64) {
	cuts := st.cuts
	t.makeRoom(st, st.sym.intern(lbls, meta, ms, startMs))
	if st.cuts != cuts {
		// A new request: its symbol table starts empty.
		st.sym.intern(lbls, meta, ms, startMs)
	}
	s := st.sym
	b := st.raw
	for _, sym := range s.added {
		b = protowire.AppendTag(b, v2RequestSymbols, protowire.BytesType)
		b = protowire.AppendString(b, sym)
	}
	b = protowire.AppendTag(b, v2RequestTimeseries, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(v2SeriesSize(s.ids, meta, ms, startMs)))
	b = protowire.AppendTag(b, v2SeriesLabelsRefs, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(refsSize(s.ids[:len(s.ids)-2])))
	for _, r := range s.ids[:len(s.ids)-2] {
		b = protowire.AppendVarint(b, uint64(r))
	}
	b = protowire.AppendTag(b, v2SeriesSamples, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(v2SampleSize(ms, startMs)))
	b = protowire.AppendTag(b, v2SampleValue, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(v))
	b = protowire.AppendTag(b, v2SampleTimestamp, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(ms))
	if startMs != 0 {
		b = protowire.AppendTag(b, v2SampleStart, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(startMs))
	}
	help, unit := s.ids[len(s.ids)-2], s.ids[len(s.ids)-1]
	b = protowire.AppendTag(b, v2SeriesMetadata, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(metadataSize(meta.typ, help, unit)))
	b = protowire.AppendTag(b, v2MetadataType, protowire.VarintType)
	b = protowire.AppendVarint(b, meta.typ)
	if help != 0 {
		b = protowire.AppendTag(b, v2MetadataHelp, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(help))
	}
	if unit != 0 {
		b = protowire.AppendTag(b, v2MetadataUnit, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(unit))
	}
	s.added = s.added[:0]
	st.raw = b
	st.added()
}

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

// translator turns a batch of metrics into compressed remote-write requests.
//
// It follows the OTel-to-Prometheus rules of contrib's
// pkg/translator/prometheusremotewrite with the settings of the Prometheus
// exporters here (UnderscoreEscapingWithSuffixes, no otel_scope_* labels, no
// target_info): names and label names from otlptranslator; a monotonic
// cumulative sum is a counter (`_total`), a gauge or another cumulative sum
// a gauge; an attribute with an empty value is no label; job and instance
// come from service.namespace/service.name and service.instance.id; with
// resource_to_telemetry_conversion (on by default) every resource
// attribute is a label too (promname.PointLabels); an
// external label is added unless an attribute has its name; a point without
// a recorded value is a staleness marker. Delta sums, histograms,
// exponential histograms and summaries are not translated (none comes from
// the ernic receiver): their points are counted by type (untranslated.go). It writes the series straight from
// the batch instead of through contrib's map of series: at 64x1024 that map
// cost 14 CPU s/min, more than the whole collector may (docs/performance.md).
type translator struct {
	external []prompb.Label // sorted by name
	maxBytes int
	// maxSamples bounds a request in samples (max_samples_per_send).
	maxSamples int
	// proto is the protocol new requests are written in (a protocol;
	// 1.0 after a 2.0 endpoint turned out to take 1.0 only).
	proto atomic.Uint32
	names *promname.Namer
	// promote makes resource attributes labels
	// (resource_to_telemetry_conversion).
	promote bool
	// noTemplates turns seriesTemplate off (tests compare both paths).
	noTemplates bool
	// templates are the series templates of earlier batches.
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

// translate returns md as remote-write requests of at most maxBytes and
// maxSamples each (before compression), and an error counting the points
// it could not translate, by type (the rest is in the request).
func (t *translator) translate(md pmetric.Metrics) (*request, error) {
	st := t.begin()
	skipped := t.add(st, md)
	return t.end(st), skipped.err()
}

// begin starts the requests of one queue item on the pooled scratch
// buffers.
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

// add translates md into st after what st holds: the series go on in the
// request being written, which is compressed when the next series would
// take it past maxBytes or maxSamples. A remote-write 1.0 WriteRequest is its repeated
// timeseries field and nothing else here, so the series of several batches
// make one request, as if one batch had come. It returns the points left
// out.
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

// end compresses the request being written, gives the scratch buffers
// back to the pool and returns st's requests; st is not used after.
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
			// The first point's attributes choose the metric's
			// template; a point that does not fit it takes the general
			// path.
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

// appendSeries writes one TimeSeries of one sample into the request being
// built, after the request before it is compressed when this one would take
// it past maxBytes. It writes the protobuf encoding of prompb.TimeSeries
// (labels = 1, samples = 2; Label name = 1, value = 2; Sample value = 1,
// timestamp = 2) field by field with protowire, straight from the labels:
// building prompb structs for a batch and marshalling them was most of
// remote write's CPU (docs/performance-pipelines.md).
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

// appendSeriesOf is appendSeries for the labels of a template filled with
// values.
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

// makeRoom, before a series of entry bytes, puts the item st holds in the
// queue when the series would take it past its bound (spill), and ends
// the request being written when it would take it past maxBytes or
// maxSamples (a series carries one sample).
func (t *translator) makeRoom(st *batchState, entry int) {
	if st.spill != nil && st.overflows(entry) {
		st.spill(st)
	}
	if st.rawSize() > 0 && (st.rawSize()+entry > t.maxBytes || st.inRaw >= t.maxSamples) {
		st.flush()
	}
}

// appendSample appends a TimeSeries.samples field of one sample.
func appendSample(b []byte, v float64, ms int64) []byte {
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sampleSize(ms)))
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(v))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(ms))
}

// labelSize is the encoded size of a Label message (empty fields left out).
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

// sampleSize is the encoded size of a Sample message: the value (a fixed
// 64-bit field) and the timestamp in milliseconds.
func sampleSize(ms int64) int { return 1 + 8 + 1 + protowire.SizeVarint(uint64(ms)) }

// sampleFieldSize is the size of TimeSeries.samples with one sample.
func sampleFieldSize(ms int64) int { return fieldSize(sampleSize(ms)) }

// fieldSize is the size of a length-delimited field of a one-byte tag and
// a message of n bytes.
func fieldSize(n int) int { return 1 + protowire.SizeBytes(n) }

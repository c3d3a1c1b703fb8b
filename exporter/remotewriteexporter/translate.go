package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

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
// a recorded value is a staleness marker. Delta sums, histograms and
// summaries are not translated (none comes from the ernic receiver): they
// are counted in the returned error. It writes the series straight from
// the batch instead of through contrib's map of series: at 64x1024 that map
// cost 14 CPU s/min, more than the whole collector may (README,
// Performance).
type translator struct {
	external []prompb.Label // sorted by name
	maxBytes int
	names    *promname.Namer
	// promote makes resource attributes labels
	// (resource_to_telemetry_conversion).
	promote bool
}

func newTranslator(cfg *Config) *translator {
	t := &translator{
		maxBytes: cfg.MaxBatchSizeBytes,
		names:    promname.New(),
		promote:  cfg.ResourceToTelemetryConversion.Enabled,
	}
	for k, v := range cfg.ExternalLabels {
		t.external = append(t.external, prompb.Label{Name: k, Value: v})
	}
	slices.SortFunc(t.external, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	return t
}

// batchState is what one translate call builds: the series, their labels
// and samples in slabs, and the size each series takes in a request.
type batchState struct {
	series  []prompb.TimeSeries
	sizes   []int
	labels  []prompb.Label
	samples []prompb.Sample
	skipped int
}

// translate returns md as remote-write requests of at most maxBytes each
// (before compression), and an error counting the points it could not
// translate (the rest is in the request).
func (t *translator) translate(md pmetric.Metrics) (*request, error) {
	n := md.DataPointCount()
	st := &batchState{
		series:  make([]prompb.TimeSeries, 0, n),
		sizes:   make([]int, 0, n),
		labels:  make([]prompb.Label, 0, n*4),
		samples: make([]prompb.Sample, 0, n),
	}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		base := t.resourceLabels(rm.Resource())
		labels := t.names.NewPointLabels(rm.Resource().Attributes(), t.promote, true)
		sms := rm.ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				t.addMetric(st, ms.At(k), labels, base)
			}
		}
	}
	req, err := t.requests(st)
	if err != nil {
		return nil, err
	}
	if st.skipped > 0 {
		return req, fmt.Errorf("%d metrics (delta sums, histograms, summaries, untranslatable names) or points without a value not translated", st.skipped)
	}
	return req, nil
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

func (t *translator) addMetric(st *batchState, m pmetric.Metric, labels *promname.PointLabels, base []prompb.Label) {
	name, _, dps, ok := t.names.Family(m)
	if !ok {
		st.skipped++ // counted once per metric: a delta sum, a histogram, a summary or an untranslatable name
		return
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
			st.skipped++
			continue
		}
		first := len(st.labels)
		st.labels = append(st.labels, prompb.Label{Name: "__name__", Value: name})
		for _, l := range labels.Of(dp.Attributes()) {
			st.labels = append(st.labels, prompb.Label{Name: l.Name, Value: l.Value})
		}
		st.labels = appendMissing(st.labels, first, base)
		st.labels = appendMissing(st.labels, first, t.external)
		lbls := st.labels[first:len(st.labels):len(st.labels)]
		if !slices.IsSortedFunc(lbls, cmpLabel) {
			slices.SortStableFunc(lbls, cmpLabel)
		}
		if hasDuplicate(lbls) {
			lbls = mergeDuplicates(lbls)
			st.labels = st.labels[:first+len(lbls)]
		}
		st.samples = append(st.samples, prompb.Sample{Value: v, Timestamp: int64(dp.Timestamp()) / 1e6})
		ts := prompb.TimeSeries{Labels: lbls, Samples: st.samples[len(st.samples)-1 : len(st.samples) : len(st.samples)]}
		st.series = append(st.series, ts)
		st.sizes = append(st.sizes, ts.Size())
	}
}

// appendMissing appends the labels of add whose name is not among
// dst[first:] yet: attributes win over job/instance and external labels.
func appendMissing(dst []prompb.Label, first int, add []prompb.Label) []prompb.Label {
	for _, a := range add {
		if !slices.ContainsFunc(dst[first:], func(l prompb.Label) bool { return l.Name == a.Name }) {
			dst = append(dst, a)
		}
	}
	return dst
}

func cmpLabel(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) }

// hasDuplicate reports whether sorted labels repeat a name.
func hasDuplicate(l []prompb.Label) bool {
	for i := 1; i < len(l); i++ {
		if l[i].Name == l[i-1].Name {
			return true
		}
	}
	return false
}

// mergeDuplicates joins, in sorted labels, the values of labels whose names
// became equal once translated ("a.b" and "a_b"), as contrib does: "x;y".
func mergeDuplicates(l []prompb.Label) []prompb.Label {
	out := l[:0]
	for _, x := range l {
		if n := len(out); n > 0 && out[n-1].Name == x.Name {
			if out[n-1].Value != x.Value {
				out[n-1].Value += ";" + x.Value
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// requests cuts the series into WriteRequests of at most maxBytes and
// compresses each.
func (t *translator) requests(st *batchState) (*request, error) {
	var payloads [][]byte
	var samples []int
	var raw []byte
	start, size := 0, 0
	flush := func(end int) error {
		if end == start {
			return nil
		}
		wr := prompb.WriteRequest{Timeseries: st.series[start:end]}
		if cap(raw) < size {
			raw = make([]byte, size)
		}
		n, err := wr.MarshalToSizedBuffer(raw[:size])
		if err != nil {
			return err
		}
		if n != size {
			return errors.New("remote_write: request size mismatch")
		}
		payloads = append(payloads, snappy.Encode(nil, raw[:size]))
		samples = append(samples, end-start)
		start, size = end, 0
		return nil
	}
	for i, s := range st.sizes {
		// A series is a length-delimited field 1 of the request.
		entry := 1 + varintLen(s) + s
		if size > 0 && size+entry > t.maxBytes {
			if err := flush(i); err != nil {
				return nil, err
			}
		}
		size += entry
	}
	if err := flush(len(st.sizes)); err != nil {
		return nil, err
	}
	return newRequest(payloads, samples), nil
}

// varintLen is the length of x as a protobuf varint.
func varintLen(x int) int { return (bits.Len64(uint64(x)|1) + 6) / 7 }

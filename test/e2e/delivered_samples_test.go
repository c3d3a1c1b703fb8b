// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/otlptranslator"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// sentSample is one sample of a request as the backend names its series:
// remote write's labels, or OTLP translated as Prometheus 3 does.
type sentSample struct {
	series string
	ts     int64 // ms
	value  float64
	// start is a counter's start in ms; 0 for a gauge or an unknown start.
	start int64
}

// deliveredRequest is one request a deliveryRecorder passed on.
type deliveredRequest struct {
	at      time.Time
	status  int
	answer  string
	samples []sentSample
}

// deliveryRecorder stands in front of a backend (Prometheus' OTLP or
// remote-write endpoint): it passes every request on, answers 503 while
// the backend is away, and keeps each request's samples and answer.
type deliveryRecorder struct {
	backend string
	// promote: the resource attributes Prometheus makes labels
	// (otlp.promote_resource_attributes), besides job and instance.
	promote []string
	url     string

	mu   sync.Mutex
	reqs []deliveredRequest
	// undecodable lists requests the recorder could not read.
	undecodable []string
}

func startDeliveryRecorder(t *testing.T, backend string, promote ...string) *deliveryRecorder {
	t.Helper()
	r := &deliveryRecorder{backend: backend, promote: promote}
	r.url = harness.ServeHTTP(t, r)
	return r
}

func (r *deliveryRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	samples, decodeErr := decodeDelivery(req.URL.Path, req.Header, body, r.promote)
	rec := deliveredRequest{at: time.Now(), samples: samples, status: http.StatusProcessing}
	// Noted before it is forwarded: the backend may store it before it answers.
	r.mu.Lock()
	i := len(r.reqs)
	r.reqs = append(r.reqs, rec)
	if decodeErr != nil {
		r.undecodable = append(r.undecodable, fmt.Sprintf("%s %s: %v", req.URL.Path, req.Header.Get("Content-Type"), decodeErr))
	}
	r.mu.Unlock()
	out, err := http.NewRequestWithContext(req.Context(), req.Method, r.backend+req.URL.Path, bytes.NewReader(body))
	if err == nil {
		out.Header = req.Header.Clone()
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(out); err == nil {
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			rec.status, rec.answer = resp.StatusCode, string(answer)
		}
	}
	if err != nil {
		rec.status, rec.answer = http.StatusServiceUnavailable, "backend away: "+err.Error()
	}
	r.mu.Lock()
	r.reqs[i].status, r.reqs[i].answer = rec.status, rec.answer
	r.mu.Unlock()
	w.WriteHeader(rec.status)
	_, _ = io.WriteString(w, rec.answer)
}

func (r *deliveryRecorder) requests() []deliveredRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// acceptedAfter reports whether the backend took a sample newer than at.
func (r *deliveryRecorder) acceptedAfter(at time.Time) bool {
	for _, q := range r.requests() {
		if q.status/100 != 2 {
			continue
		}
		for _, s := range q.samples {
			if s.ts > at.UnixMilli() {
				return true
			}
		}
	}
	return false
}

// acceptedValue reports whether the backend took value for metric of
// instance id at a time after at.
func (r *deliveryRecorder) acceptedValue(metric, id string, value float64, at time.Time) bool {
	name, instance := "__name__="+metric+",", "ernic_id="+id+","
	for _, q := range r.requests() {
		if q.status/100 != 2 {
			continue
		}
		for _, s := range q.samples {
			if s.ts > at.UnixMilli() && s.value == value && strings.Contains(s.series, name) && strings.Contains(s.series, instance) {
				return true
			}
		}
	}
	return false
}

// decodeDelivery reads an OTLP/HTTP or remote-write (1.0 or 2.0) request.
func decodeDelivery(path string, h http.Header, body []byte, promote []string) ([]sentSample, error) {
	switch {
	case strings.HasSuffix(path, "/v1/metrics"):
		if h.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			if body, err = io.ReadAll(zr); err != nil {
				return nil, err
			}
		}
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			return nil, err
		}
		return otlpSamples(req.Metrics(), promote)
	case strings.HasSuffix(path, "/write"):
		raw, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, err
		}
		if strings.Contains(h.Get("Content-Type"), "io.prometheus.write.v2.Request") {
			return remoteWriteV2Samples(raw)
		}
		var req prompb.WriteRequest
		if err := req.Unmarshal(raw); err != nil {
			return nil, err
		}
		var out []sentSample
		for _, ts := range req.Timeseries {
			kv := make([]string, 0, len(ts.Labels))
			for _, l := range ts.Labels {
				kv = append(kv, l.Name+"="+l.Value)
			}
			key := labelsKey(kv)
			for _, s := range ts.Samples {
				out = append(out, sentSample{series: key, ts: s.Timestamp, value: s.Value})
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a metrics path")
}

func remoteWriteV2Samples(raw []byte) ([]sentSample, error) {
	var req writev2.Request
	if err := req.Unmarshal(raw); err != nil {
		return nil, err
	}
	var out []sentSample
	for _, ts := range req.Timeseries {
		kv := make([]string, 0, len(ts.LabelsRefs)/2)
		for i := 0; i+1 < len(ts.LabelsRefs); i += 2 {
			kv = append(kv, req.Symbols[ts.LabelsRefs[i]]+"="+req.Symbols[ts.LabelsRefs[i+1]])
		}
		key := labelsKey(kv)
		counter := ts.Metadata.Type == writev2.Metadata_METRIC_TYPE_COUNTER
		for _, s := range ts.Samples {
			x := sentSample{series: key, ts: s.Timestamp, value: s.Value}
			if counter {
				x.start = s.StartTimestamp
			}
			out = append(out, x)
		}
	}
	return out, nil
}

// otlpSamples names md's points as Prometheus 3 stores them (suffixes,
// underscores; job, instance and the promoted resource attributes).
func otlpSamples(md pmetric.Metrics, promote []string) ([]sentSample, error) {
	names := otlptranslator.NewMetricNamer("", otlptranslator.UnderscoreEscapingWithSuffixes)
	labels := otlptranslator.LabelNamer{}
	var out []sentSample
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		res := rms.At(i).Resource().Attributes()
		var base []string
		for attr, label := range map[string]string{"service.name": "job", "service.instance.id": "instance"} {
			if v, ok := res.Get(attr); ok {
				base = append(base, label+"="+v.AsString())
			}
		}
		for _, attr := range promote {
			if v, ok := res.Get(attr); ok {
				l, err := labels.Build(attr)
				if err != nil {
					return nil, err
				}
				base = append(base, l+"="+v.AsString())
			}
		}
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				typ, dps := otlptranslator.MetricType(otlptranslator.MetricTypeGauge), pmetric.NumberDataPointSlice{}
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps, typ = m.Sum().DataPoints(), otlptranslator.MetricTypeNonMonotonicCounter
					if m.Sum().IsMonotonic() {
						typ = otlptranslator.MetricTypeMonotonicCounter
					}
				default:
					return nil, fmt.Errorf("metric %s: type %s", m.Name(), m.Type())
				}
				name, err := names.Build(otlptranslator.Metric{Name: m.Name(), Unit: m.Unit(), Type: typ})
				if err != nil {
					return nil, err
				}
				for p := range dps.Len() {
					s, err := otlpSample(dps.At(p), name, base, labels, typ == otlptranslator.MetricTypeMonotonicCounter)
					if err != nil {
						return nil, err
					}
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

func otlpSample(dp pmetric.NumberDataPoint, name string, base []string, labels otlptranslator.LabelNamer, counter bool) (sentSample, error) {
	kv := append([]string{"__name__=" + name}, base...)
	var err error
	dp.Attributes().Range(func(k string, v pcommon.Value) bool {
		var l string
		if l, err = labels.Build(k); err == nil && v.AsString() != "" { // Prometheus drops empty labels
			kv = append(kv, l+"="+v.AsString())
		}
		return err == nil
	})
	s := sentSample{series: labelsKey(kv), ts: int64(dp.Timestamp()) / 1e6, value: dp.DoubleValue()}
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		s.value = float64(dp.IntValue())
	}
	if dp.Flags().NoRecordedValue() {
		s.value = math.Float64frombits(staleNaN)
	}
	if counter && dp.StartTimestamp() != 0 {
		s.start = int64(dp.StartTimestamp()) / 1e6
	}
	return s, err
}

// staleNaN is Prometheus' staleness marker (model/value.StaleNaN).
const staleNaN uint64 = 0x7ff0000000000002

func labelsKey(kv []string) string {
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

// sentSeries gathers every sample of reqs by series and timestamp.
func sentSeries(reqs []deliveredRequest) map[string]map[int64][]sentSample {
	out := map[string]map[int64][]sentSample{}
	for _, q := range reqs {
		for _, s := range q.samples {
			if out[s.series] == nil {
				out[s.series] = map[int64][]sentSample{}
			}
			out[s.series][s.ts] = append(out[s.series][s.ts], s)
		}
	}
	return out
}

// checkSentSeries returns each series that got two values at one timestamp,
// and each counter point whose start is at or after it, or on another
// sample of its series (where a backend's start-time zero sample would
// meet a value).
func checkSentSeries(reqs []deliveredRequest) []string {
	var problems []string
	for series, byTS := range sentSeries(reqs) {
		for ts, group := range byTS {
			for _, s := range group[1:] {
				if math.Float64bits(s.value) != math.Float64bits(group[0].value) {
					problems = append(problems, fmt.Sprintf("%s at %s: %v and %v", series, msTime(ts), group[0].value, s.value))
					break
				}
			}
			for _, s := range group {
				switch other, taken := byTS[s.start]; {
				case s.start == 0:
				case s.start >= s.ts:
					problems = append(problems, fmt.Sprintf("%s at %s: counter start %s is not before the point", series, msTime(ts), msTime(s.start)))
				case taken && other[0].value != 0:
					problems = append(problems, fmt.Sprintf("%s at %s: counter start %s is the time of its sample %v", series, msTime(ts), msTime(s.start), other[0].value))
				}
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// checkStoredSeries compares what the backend holds of the ernic_ series
// in (from, to] with what was sent: each stored sample is the one value
// sent at its time, or a start-time zero sample at a sent counter start.
func checkStoredSeries(ctx context.Context, p *harness.Prometheus, reqs []deliveredRequest, from, to time.Time) ([]string, int, error) {
	m, err := p.RawSamples(ctx, `{__name__=~"ernic_.+"}`, to.Sub(from), to)
	if err != nil {
		return nil, 0, err
	}
	sent := sentSeries(reqs)
	starts := map[string]map[int64]bool{}
	for series, byTS := range sent {
		for _, group := range byTS {
			for _, s := range group {
				if s.start != 0 {
					if starts[series] == nil {
						starts[series] = map[int64]bool{}
					}
					starts[series][s.start] = true
				}
			}
		}
	}
	var problems []string
	stored := 0
	for _, ss := range m {
		series := promSeriesKey(ss.Metric)
		byTS, ok := sent[series]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: stored, never sent", series))
			continue
		}
		for _, v := range ss.Values {
			stored++
			ts := int64(v.Timestamp)
			switch group, ok := byTS[ts]; {
			case ok && float64(v.Value) != group[0].value:
				problems = append(problems, fmt.Sprintf("%s at %s: stored %v, sent %v", series, msTime(ts), v.Value, group[0].value))
			case !ok && !(v.Value == 0 && starts[series][ts]):
				problems = append(problems, fmt.Sprintf("%s at %s: stored %v, nothing sent at that time", series, msTime(ts), v.Value))
			}
		}
	}
	sort.Strings(problems)
	return problems, stored, nil
}

func promSeriesKey(m model.Metric) string {
	kv := make([]string, 0, len(m))
	for k, v := range m {
		kv = append(kv, string(k)+"="+string(v))
	}
	return labelsKey(kv)
}

func msTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04:05.000") }

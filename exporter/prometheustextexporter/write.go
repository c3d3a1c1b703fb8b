// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter"

import (
	"bufio"
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// family is one Prometheus metric family of a GET and its kept metrics.
type family struct {
	name, help, typ string
	metrics         []pmetric.Metric
}

type namer struct {
	*promname.Namer
}

func newNamer() *namer { return &namer{promname.New()} }

// families groups the metrics of rms into families, sorted by name.
func (n *namer) families(rms []pmetric.ResourceMetrics) []*family {
	byName := map[string]*family{}
	for _, rm := range rms {
		sms := rm.ScopeMetrics()
		for i := range sms.Len() {
			ms := sms.At(i).Metrics()
			for j := range ms.Len() {
				m := ms.At(j)
				name, typ, _, ok := n.Family(m)
				if !ok {
					continue
				}
				f := byName[name]
				if f == nil {
					f = &family{name: name, help: m.Description(), typ: string(typ)}
					byName[name] = f
				}
				f.metrics = append(f.metrics, m)
			}
		}
	}
	out := make([]*family, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	return out
}

// rendered is one resource's batch as series lines, without HELP and TYPE
// (once per GET for a family of several resources). A line is kept as a kind
// byte and its text after the family's prefix of that kind, so that the name
// and resource labels, most of a QP line, are kept once per family.
type rendered struct {
	fams    []renderedFamily
	buf     []byte
	resText string
	// serving counts the GETs writing this batch: one replaced while no
	// GET writes it is rendered into again.
	serving atomic.Int32
}

// renderedFamily's lines are buf[start:end].
type renderedFamily struct {
	name, help, typ string
	// prefix[lineBare] is `name{resource labels}` closed (or `name`);
	// prefix[lineOpen] leaves it open for the point's own labels.
	prefix     [2]string
	start, end int
}

// The kinds of a kept line: what comes before its text.
const (
	lineBare  byte = iota // prefix[lineBare]: a point without labels of its own
	lineOpen              // prefix[lineOpen]: a point with labels after the resource's
	lineWhole             // nothing: the whole line (a point attribute joined a resource label)
)

func (f *renderedFamily) writeTo(w *bufio.Writer, r *rendered) error {
	lines := r.buf[f.start:f.end]
	for len(lines) > 0 {
		end := bytes.IndexByte(lines, '\n') + 1
		if kind := lines[0]; kind != lineWhole {
			_, _ = w.WriteString(f.prefix[kind])
		}
		if _, err := w.Write(lines[1:end]); err != nil {
			return err
		}
		lines = lines[end:]
	}
	return nil
}

// render writes the series lines of rm, with its resource labels when
// promote, skipping points without a value; into, if not nil, is reused.
func (n *namer) render(rm pmetric.ResourceMetrics, promote bool, into *rendered) *rendered {
	fams := n.families([]pmetric.ResourceMetrics{rm})
	labels := n.NewPointLabels(rm.Resource().Attributes(), promote, false)
	res := labels.Resource()
	resBytes := appendLabelList(nil, res)
	out, b := into, []byte(nil)
	if out != nil {
		if out.resText != string(resBytes) {
			out.resText = string(resBytes)
			clear(out.fams[:cap(out.fams)]) // other resource labels: no prefix is kept
		}
		out.fams = out.fams[:0]
		b = out.buf[:0]
	} else {
		out = &rendered{fams: make([]renderedFamily, 0, len(fams)), resText: string(resBytes)}
		// A scratch buffer, copied out at its exact size: one allocation, where
		// growing a buffer of its own took several.
		scratch := scratchBuffers.Get().(*[]byte)
		defer scratchBuffers.Put(scratch)
		b = (*scratch)[:0]
		defer func() {
			out.buf = bytes.Clone(b)
			*scratch = b
		}()
	}
	resText := out.resText
	for _, f := range fams {
		start := len(b)
		for _, m := range f.metrics {
			dps := numberPoints(m)
			for i := range dps.Len() {
				dp := dps.At(i)
				if dp.Flags().NoRecordedValue() || dp.ValueType() == pmetric.NumberDataPointValueTypeEmpty {
					continue
				}
				all := labels.Of(dp.Attributes())
				switch {
				case labels.ResourceChanged():
					b = append(b, lineWhole)
					b = append(b, f.name...)
					b = appendLabels(b, all)
				case len(all) == len(res):
					b = append(b, lineBare)
				default:
					b = append(b, lineOpen)
					b = appendLabelList(b, all[len(res):])
					b = append(b, '}')
				}
				b = append(b, ' ')
				b = appendValue(b, dp)
				b = append(b, '\n')
			}
		}
		if len(b) > start {
			rf := renderedFamily{name: f.name, help: f.help, typ: f.typ, start: start, end: len(b)}
			if i := len(out.fams); i < cap(out.fams) && out.fams[:i+1][i].name == f.name {
				rf.prefix = out.fams[:i+1][i].prefix // the earlier batch's, same resource labels
			} else {
				rf.prefix[lineBare], rf.prefix[lineOpen] = f.name, f.name+"{"
				if resText != "" {
					rf.prefix[lineBare], rf.prefix[lineOpen] = f.name+"{"+resText+"}", f.name+"{"+resText+","
				}
			}
			out.fams = append(out.fams, rf)
		}
	}
	if into != nil {
		out.buf = b
	}
	return out
}

// scratchBuffers hold a batch as render writes it (*[]byte).
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

func numberPoints(m pmetric.Metric) pmetric.NumberDataPointSlice {
	if m.Type() == pmetric.MetricTypeGauge {
		return m.Gauge().DataPoints()
	}
	return m.Sum().DataPoints()
}

// write writes the batches in the text format 0.0.4: families in name
// order, HELP and TYPE once each, then the lines of every batch, in rs order.
func write(w *bufio.Writer, rs []*rendered) error {
	type part struct {
		r *rendered
		f *renderedFamily
	}
	byName := map[string][]part{}
	var names []string
	for _, r := range rs {
		for i := range r.fams {
			f := &r.fams[i]
			if _, ok := byName[f.name]; !ok {
				names = append(names, f.name)
			}
			byName[f.name] = append(byName[f.name], part{r, f})
		}
	}
	slices.Sort(names)
	for _, name := range names {
		parts := byName[name]
		writeHeader(w, parts[0].f)
		for _, p := range parts {
			if err := p.f.writeTo(w, p.r); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

func writeHeader(w *bufio.Writer, f *renderedFamily) {
	b := w.AvailableBuffer()
	if f.help != "" {
		b = append(b, "# HELP "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = appendEscaped(b, f.help, false)
		b = append(b, '\n')
	}
	b = append(b, "# TYPE "...)
	b = append(b, f.name...)
	b = append(b, ' ')
	b = append(b, f.typ...)
	b = append(b, '\n')
	_, _ = w.Write(b)
}

func appendLabels(b []byte, labels []promname.Label) []byte {
	if len(labels) == 0 {
		return b
	}
	b = append(b, '{')
	b = appendLabelList(b, labels)
	return append(b, '}')
}

func appendLabelList(b []byte, labels []promname.Label) []byte {
	for i, l := range labels {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, l.Name...)
		b = append(b, '=', '"')
		b = appendEscaped(b, l.Value, true)
		b = append(b, '"')
	}
	return b
}

// appendEscaped escapes s for a label value (quote) or HELP text; invalid
// UTF-8 becomes U+FFFD, which a Prometheus server would otherwise refuse.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\\' || c == '\n' || (c == '"' && quote) {
			return appendEscapedSlow(b, s, quote)
		}
	}
	return append(b, s...)
}

func appendEscapedSlow(b []byte, s string, quote bool) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch c := s[i]; {
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '"' && quote:
			esc = `\"`
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		start = i + 1
	}
	return append(b, s[start:]...)
}

// appendValue appends the point's value: an integer as it is, a float in
// the shortest form that reads back the same, and NaN, +Inf, -Inf.
func appendValue(b []byte, dp pmetric.NumberDataPoint) []byte {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return strconv.AppendInt(b, dp.IntValue(), 10)
	}
	f := dp.DoubleValue()
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

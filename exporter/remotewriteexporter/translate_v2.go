// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"math"

	"github.com/prometheus/otlptranslator"
	"github.com/prometheus/prometheus/prompb"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
)

// protocol is the remote-write message a request is encoded in.
type protocol uint8

const (
	protocolV1 protocol = 1 // prometheus.WriteRequest (remote write 1.0)
	protocolV2 protocol = 2 // io.prometheus.write.v2.Request (remote write 2.0)
)

// The protobuf_message values, Prometheus' names.
const (
	messageV1 = "prometheus.WriteRequest"
	messageV2 = "io.prometheus.write.v2.Request"
)

func (p protocol) contentType() string {
	if p == protocolV2 {
		return "application/x-protobuf;proto=" + messageV2
	}
	return "application/x-protobuf"
}

func (p protocol) version() string {
	if p == protocolV2 {
		return "2.0.0"
	}
	return "0.1.0"
}

// Field numbers of io.prometheus.write.v2 (prompb/io/prometheus/write/v2).
const (
	v2RequestSymbols    = 4
	v2RequestTimeseries = 5
	v2SeriesLabelsRefs  = 1
	v2SeriesSamples     = 2
	v2SeriesMetadata    = 5
	v2SampleValue       = 1
	v2SampleTimestamp   = 2
	v2SampleStart       = 3
	v2MetadataType      = 1
	v2MetadataHelp      = 3
	v2MetadataUnit      = 4
	v2TypeCounter       = 1
	v2TypeGauge         = 2
)

// symbolTable is the 2.0 request's symbols. Each is written right before
// the first series that refers to it: protobuf readers append a repeated
// field's values wherever they come.
type symbolTable struct {
	refs  map[string]uint32
	added []string // symbols of the series being written, not in raw yet
	ids   []uint32 // the series' label references
	units map[string]string
	// prev and prevIDs, the series before's, save map lookups: a metric's
	// series differ in a label or two.
	prev    []string
	prevIDs []uint32
}

func (s *symbolTable) reset() {
	clear(s.refs)
	s.added = s.added[:0]
	s.prev, s.prevIDs = s.prev[:0], s.prevIDs[:0]
}

func (s *symbolTable) refAt(i int, v string) uint32 {
	if i < len(s.prev) && s.prev[i] == v {
		return s.prevIDs[i]
	}
	r := s.ref(v)
	if i < len(s.prev) {
		s.prev[i], s.prevIDs[i] = v, r
	} else {
		s.prev, s.prevIDs = append(s.prev, v), append(s.prevIDs, r)
	}
	return r
}

func (s *symbolTable) ref(v string) uint32 {
	if s.refs == nil {
		s.refs = map[string]uint32{}
	}
	if len(s.refs) == 0 {
		s.refs[""] = 0 // the specification's first symbol
		s.added = append(s.added, "")
	}
	r, ok := s.refs[v]
	if !ok {
		r = uint32(len(s.refs))
		s.refs[v] = r
		s.added = append(s.added, v)
	}
	return r
}

// seriesMeta is a 2.0 series' metadata.
type seriesMeta struct {
	typ        uint64
	help, unit string
}

// metaOf names the unit as Prometheus' OTLP receiver does, cached.
func metaOf(st *batchState, typ promname.Type, unit, help string) seriesMeta {
	meta := seriesMeta{typ: v2TypeGauge, help: help}
	if typ == promname.Counter {
		meta.typ = v2TypeCounter
	}
	if unit != "" {
		u, ok := st.sym.units[unit]
		if !ok {
			namer := otlptranslator.UnitNamer{}
			u = namer.Build(unit)
			if st.sym.units == nil {
				st.sym.units = map[string]string{}
			}
			st.sym.units[unit] = u
		}
		meta.unit = u
	}
	return meta
}

// appendSeriesV2 writes one 2.0 TimeSeries and its new symbols; startMs 0: none.
func (t *translator) appendSeriesV2(st *batchState, lbls []prompb.Label, meta seriesMeta, v float64, ms, startMs int64) {
	cuts := st.cuts
	t.makeRoom(st, internV2(st.sym, lbls, meta, ms, startMs))
	if st.cuts != cuts {
		// A new request: its symbol table starts empty.
		internV2(st.sym, lbls, meta, ms, startMs)
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

// internV2 puts lbls', help's and unit's references in s.ids and returns
// the size of the series and its new symbols.
func internV2(s *symbolTable, lbls []prompb.Label, meta seriesMeta, ms, startMs int64) int {
	s.added = s.added[:0]
	s.ids = s.ids[:0]
	for i, l := range lbls {
		s.ids = append(s.ids, s.refAt(2*i, l.Name), s.refAt(2*i+1, l.Value))
	}
	n := 2 * len(lbls)
	s.ids = append(s.ids, s.refAt(n, meta.help), s.refAt(n+1, meta.unit))
	n = 0
	for _, sym := range s.added {
		n += fieldSize(len(sym))
	}
	return n + fieldSize(v2SeriesSize(s.ids, meta, ms, startMs))
}

func v2SeriesSize(ids []uint32, meta seriesMeta, ms, startMs int64) int {
	labels := ids[:len(ids)-2]
	return fieldSize(refsSize(labels)) + fieldSize(v2SampleSize(ms, startMs)) +
		fieldSize(metadataSize(meta.typ, ids[len(ids)-2], ids[len(ids)-1]))
}

func refsSize(refs []uint32) int {
	n := 0
	for _, r := range refs {
		n += protowire.SizeVarint(uint64(r))
	}
	return n
}

func v2SampleSize(ms, startMs int64) int {
	n := 1 + 8 + 1 + protowire.SizeVarint(uint64(ms))
	if startMs != 0 {
		n += 1 + protowire.SizeVarint(uint64(startMs))
	}
	return n
}

func metadataSize(typ uint64, help, unit uint32) int {
	n := 1 + protowire.SizeVarint(typ)
	if help != 0 {
		n += 1 + protowire.SizeVarint(uint64(help))
	}
	if unit != 0 {
		n += 1 + protowire.SizeVarint(uint64(unit))
	}
	return n
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

import (
	"github.com/prometheus/otlptranslator"
	"github.com/prometheus/prometheus/prompb"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"
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

// meta names the unit as Prometheus' OTLP receiver does, cached.
func (s *symbolTable) meta(typ promname.Type, unit, help string) seriesMeta {
	meta := seriesMeta{typ: v2TypeGauge, help: help}
	if typ == promname.Counter {
		meta.typ = v2TypeCounter
	}
	if unit != "" {
		u, ok := s.units[unit]
		if !ok {
			namer := otlptranslator.UnitNamer{}
			u = namer.Build(unit)
			if s.units == nil {
				s.units = map[string]string{}
			}
			s.units[unit] = u
		}
		meta.unit = u
	}
	return meta
}

// intern puts lbls', help's and unit's references in s.ids and returns
// the size of the series and its new symbols.
func (s *symbolTable) intern(lbls []prompb.Label, meta seriesMeta, ms, startMs int64) int {
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

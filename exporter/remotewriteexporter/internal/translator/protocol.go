// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

import (
	"math"

	"github.com/prometheus/prometheus/prompb"
	"google.golang.org/protobuf/encoding/protowire"
)

// Protocol is the remote-write message a request is encoded in.
type Protocol uint8

const (
	ProtocolV1 Protocol = 1 // prometheus.WriteRequest (remote write 1.0)
	ProtocolV2 Protocol = 2 // io.prometheus.write.v2.Request (remote write 2.0)
)

// The protobuf_message values, Prometheus' names.
const (
	MessageV1 = "prometheus.WriteRequest"
	MessageV2 = "io.prometheus.write.v2.Request"
)

// ContentType is the request's Content-Type header.
func (p Protocol) ContentType() string {
	if p == ProtocolV2 {
		return "application/x-protobuf;proto=" + MessageV2
	}
	return "application/x-protobuf"
}

// Version is the request's X-Prometheus-Remote-Write-Version header.
func (p Protocol) Version() string {
	if p == ProtocolV2 {
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

// appendSample writes a 1.0 TimeSeries.samples field.
func appendSample(b []byte, v float64, ms int64) []byte {
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sampleSize(ms)))
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(v))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(ms))
}

// appendLabelField writes a 1.0 TimeSeries.labels field.
func appendLabelField(b []byte, l prompb.Label) []byte {
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(labelSize(l)))
	if l.Name != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, l.Name)
	}
	if l.Value != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, l.Value)
	}
	return b
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

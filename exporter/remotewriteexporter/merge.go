// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// mergeMaxBytes makes a large host's scrape a few items, not one held twice
// in memory (merged, and read back to send).
const mergeMaxBytes = 4 << 20

// builder is pushqueue's ItemBuilder for remote write: the batches of a
// merge window translated into the requests of one queue item as they
// come; a large batch spills into items of its own mid-batch, so that it
// never takes the batches before it down.
type builder struct {
	tr             *translator.Translator
	bound          func() (items, bytes int64)
	untranslatable func(error, int)
}

func (b *builder) Begin() (*translator.Batch, error) {
	st := b.tr.Begin()
	items, bytes := b.bound()
	st.CapItems, st.CapBytes = int(min(items, math.MaxInt)), int(min(bytes, math.MaxInt))
	return st, nil
}

func (b *builder) Write(st *translator.Batch, md pmetric.Metrics, spill func(*request)) (bool, error) {
	if st.CapItems > 0 || st.CapBytes > 0 {
		st.Spill = func(st *translator.Batch) {
			if w := st.Take(); len(w.Payloads) > 0 {
				spill(requestOf(w))
			}
		}
	}
	skipped := b.tr.Add(st, md)
	st.Spill = nil
	countUntranslated(b.untranslatable, skipped)
	return b.full(st.Size()), nil
}

// full reports whether the pending requests reached mergeMaxBytes or the queue's item bound.
func (b *builder) full(st translator.Size) bool {
	if st.Compressed >= mergeMaxBytes {
		return true
	}
	items, bytes := b.bound()
	return (bytes > 0 && int64(st.Bytes) >= bytes) || (items > 0 && int64(st.Samples) >= items)
}

func (b *builder) End(st *translator.Batch) (*request, bool, error) {
	req := requestOf(b.tr.End(st))
	return req, len(req.payloads) > 0, nil
}

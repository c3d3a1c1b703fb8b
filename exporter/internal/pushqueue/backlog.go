// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"
	"maps"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
)

// backlog is what the queue holds, in points, bytes and requests. A
// persistent queue's is read from exporterhelper's own record in the
// storage, so that an earlier process's batches count (the bound is theirs
// too); an in-memory queue's is counted here.
type backlog struct {
	sizer    exporterhelper.RequestSizerType
	capacity int64

	mu sync.Mutex
	// persistent: the figures come from the storage's record only.
	persistent             bool
	items, bytes, requests int64
}

type backlogFigures struct{ items, bytes, requests int64 }

func (b *backlog) now() backlogFigures {
	b.mu.Lock()
	defer b.mu.Unlock()
	return backlogFigures{max(b.items, 0), max(b.bytes, 0), max(b.requests, 0)}
}

// size is the backlog under the queue's sizer.
func (b *backlog) size() int64 { return b.now().under(b.sizer) }

// under is f in the terms of sizer.
func (f backlogFigures) under(sizer exporterhelper.RequestSizerType) int64 {
	switch sizer {
	case exporterhelper.RequestSizerTypeBytes:
		return f.bytes
	case exporterhelper.RequestSizerTypeItems:
		return f.items
	default:
		return f.requests
	}
}

func (b *backlog) sizerName() string {
	if b.capacity <= 0 {
		return ""
	}
	return b.sizer.String()
}

// report is the backlog as the logs show it.
func (b *backlog) report() deliveryreport.Backlog { return b.reportOf(b.now()) }

// reportWithout is report once a batch of items and bytes, just settled,
// is out: the queue on disk counts it in its record until exporterhelper
// removes it, after the sender returns.
func (b *backlog) reportWithout(items, bytes int) deliveryreport.Backlog {
	f := b.now()
	b.mu.Lock()
	persistent := b.persistent
	b.mu.Unlock()
	if persistent {
		f = backlogFigures{max(f.items-int64(items), 0), max(f.bytes-int64(bytes), 0), max(f.requests-1, 0)}
	}
	return b.reportOf(f)
}

func (b *backlog) reportOf(f backlogFigures) deliveryreport.Backlog {
	return deliveryreport.Backlog{Size: f.under(b.sizer), Sizer: b.sizer.String(), Capacity: b.capacity}
}

// add counts a batch into (+1) or out of (-1) an in-memory queue.
func (b *backlog) add(sign int64, items, bytes int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.persistent {
		return
	}
	b.items += sign * int64(items)
	b.bytes += sign * int64(bytes)
	b.requests += sign
}

// usePersistent switches to the storage's record (at Start) or back to counting (its fallback).
func (b *backlog) usePersistent(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.persistent = on
	b.items, b.bytes, b.requests = 0, 0, 0
}

// queueRecordKey is where exporterhelper's persistent queue (v0.165) keeps
// its sizes and indexes, a PersistentMetadata message.
const queueRecordKey = "qmv0"

// queueRecord is what the backlog reads of a PersistentMetadata:
// items_size (1) and bytes_size (2), sfixed64; read_index (3) and
// write_index (4), fixed64; the indexes being dispatched (5), repeated
// fixed64. Other fields are kept as they are.
type queueRecord struct {
	items, bytes int64
	read, write  uint64
	dispatched   []uint64
	other        []byte
}

func parseQueueRecord(rec []byte) (queueRecord, bool) {
	var q queueRecord
	for len(rec) > 0 {
		num, typ, n := protowire.ConsumeTag(rec)
		if n < 0 {
			return q, false
		}
		field := rec
		rec = rec[n:]
		switch {
		case typ == protowire.Fixed64Type && num >= 1 && num <= 5:
			v, n := protowire.ConsumeFixed64(rec)
			if n < 0 {
				return q, false
			}
			rec = rec[n:]
			switch num {
			case 1:
				q.items = int64(v)
			case 2:
				q.bytes = int64(v)
			case 3:
				q.read = v
			case 4:
				q.write = v
			case 5:
				q.dispatched = append(q.dispatched, v)
			}
		case typ == protowire.BytesType && num == 5: // packed
			v, n := protowire.ConsumeBytes(rec)
			if n < 0 {
				return q, false
			}
			rec = rec[n:]
			for len(v) >= 8 {
				x, k := protowire.ConsumeFixed64(v)
				if k < 0 {
					return q, false
				}
				q.dispatched = append(q.dispatched, x)
				v = v[k:]
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, rec)
			if n < 0 {
				return q, false
			}
			q.other = append(q.other, field[:len(field)-len(rec)+n]...)
			rec = rec[n:]
		}
	}
	return q, true
}

func (q queueRecord) marshal() []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, uint64(q.items))
	b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, uint64(q.bytes))
	b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, q.read)
	b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, q.write)
	if len(q.dispatched) > 0 {
		var packed []byte
		for _, d := range q.dispatched {
			packed = protowire.AppendFixed64(packed, d)
		}
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, packed)
	}
	return append(b, q.other...)
}

// rewound is the record read at start with the batches an earlier process
// was sending put back at the queue's head: exporterhelper would move them
// to its tail, behind newer ones, where a TSDB refuses them as out of
// order. The queue reads again from the oldest of them; indexes done in
// between are holes it skips (Encoding's empty read).
func rewound(rec []byte) []byte {
	q, ok := parseQueueRecord(rec)
	if !ok || len(q.dispatched) == 0 {
		return rec
	}
	for _, d := range q.dispatched {
		q.read = min(q.read, d)
	}
	q.dispatched = nil
	return q.marshal()
}

// observe takes a record's sizes; one that does not decode is ignored.
func (b *backlog) observe(rec []byte) {
	q, ok := parseQueueRecord(rec)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.persistent {
		return
	}
	b.items, b.bytes = q.items, q.bytes
	b.requests = int64(q.write-q.read) + int64(len(q.dispatched))
}

// observedHost hands exporterhelper the storage extension with its client
// watched, so that every write of the queue's record updates the backlog.
type observedHost struct {
	component.Host
	storageID component.ID
	backlog   *backlog
}

func (h observedHost) GetExtensions() map[component.ID]component.Component {
	exts := h.Host.GetExtensions()
	ext, ok := exts[h.storageID].(storage.Extension)
	if !ok {
		return exts // exporterhelper says what is wrong
	}
	exts = maps.Clone(exts)
	exts[h.storageID] = observedStorage{Extension: ext, backlog: h.backlog}
	return exts
}

type observedStorage struct {
	storage.Extension
	backlog *backlog
}

func (s observedStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := s.Extension.GetClient(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	return observedClient{Client: c, backlog: s.backlog}, nil
}

type observedClient struct {
	storage.Client
	backlog *backlog
}

// Get is how exporterhelper loads its record at start: rewound, observed.
func (c observedClient) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := c.Client.Get(ctx, key)
	if err == nil && key == queueRecordKey && v != nil {
		v = rewound(v)
		c.backlog.observe(v)
	}
	return v, err
}

func (c observedClient) Set(ctx context.Context, key string, value []byte) error {
	err := c.Client.Set(ctx, key, value)
	if err == nil && key == queueRecordKey {
		c.backlog.observe(value)
	}
	return err
}

func (c observedClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	err := c.Client.Batch(ctx, ops...)
	if err == nil {
		for _, op := range ops {
			if op.Key == queueRecordKey && op.Type != storage.Delete && op.Value != nil {
				c.backlog.observe(op.Value)
			}
		}
	}
	return err
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"google.golang.org/protobuf/encoding/protowire"
)

func record(q queueRecord) []byte { return q.marshal() }

// The batches being sent when a process ended are read again first: the
// read index goes back to the oldest of them, the sizes stay, a field the
// record may gain later is kept.
func TestRewoundPutsInterruptedBatchesFirst(t *testing.T) {
	other := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 7)
	for name, c := range map[string]struct {
		in       queueRecord
		wantRead uint64
	}{
		"one consumer":           {in: queueRecord{items: 30, bytes: 900, read: 6, write: 9, dispatched: []uint64{5}, other: other}, wantRead: 5},
		"several, with a hole":   {in: queueRecord{items: 30, bytes: 900, read: 6, write: 9, dispatched: []uint64{5, 3}}, wantRead: 3},
		"nothing being sent":     {in: queueRecord{items: 30, bytes: 900, read: 6, write: 9}, wantRead: 6},
		"an empty queue at rest": {in: queueRecord{read: 4, write: 4}, wantRead: 4},
	} {
		got, ok := parseQueueRecord(rewound(record(c.in)))
		require.True(t, ok, name)
		assert.Equal(t, c.wantRead, got.read, name)
		assert.Empty(t, got.dispatched, name)
		assert.Equal(t, c.in.items, got.items, name)
		assert.Equal(t, c.in.bytes, got.bytes, name)
		assert.Equal(t, c.in.write, got.write, name)
		assert.Equal(t, c.in.other, got.other, name)
	}
	garbage := []byte{0xff, 0xff, 0xff}
	assert.Equal(t, garbage, rewound(garbage), "a record that does not decode is left alone")
}

// The backlog of a persistent queue is its record's, an earlier process's
// batches included; an in-memory queue's is counted.
func TestBacklogFigures(t *testing.T) {
	b := &backlog{sizer: exporterhelper.RequestSizerTypeBytes, capacity: 1000}
	b.usePersistent(true)
	b.observe(record(queueRecord{items: 12, bytes: 480, read: 3, write: 6, dispatched: []uint64{2}}))
	assert.Equal(t, backlogFigures{items: 12, bytes: 480, requests: 4}, b.now())
	assert.Equal(t, int64(480), b.size())
	b.add(1, 5, 100) // counted by the record, not here
	assert.Equal(t, int64(480), b.size())

	b.usePersistent(false)
	b.add(1, 5, 100)
	b.add(1, 5, 50)
	b.add(-1, 5, 100)
	assert.Equal(t, backlogFigures{items: 5, bytes: 50, requests: 1}, b.now())
	b.observe(record(queueRecord{items: 99, bytes: 99}))
	assert.Equal(t, int64(50), b.size(), "an in-memory queue has no record")
}

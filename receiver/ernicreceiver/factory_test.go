// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// The receiver built by the factory scrapes on its own schedule and hands
// the next consumer each scrape in batches: one per instance (its
// resource), then the cluster's.
func TestFactoryReceiverDeliversMetrics(t *testing.T) {
	f := newFixture(t, "basic")
	cfg := f.config(func(c *Config) { c.CollectionInterval = MinCollectionInterval })
	sink := new(consumertest.MetricsSink)
	rcv, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 8 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, rcv.Shutdown(context.Background()))

	batches := sink.AllMetrics()
	first := pmetric.NewMetrics()
	for i, md := range batches[:4] {
		require.Equal(t, 1, md.ResourceMetrics().Len(), "batch %d: one resource", i)
		md.ResourceMetrics().At(0).CopyTo(first.ResourceMetrics().AppendEmpty())
	}
	for i := range 3 {
		id, ok := batches[i].ResourceMetrics().At(0).Resource().Attributes().Get("ernic.id")
		require.True(t, ok)
		assert.Equal(t, strconv.Itoa(i+1), id.Str(), "instance batches in manifest order")
	}
	assert.Equal(t, int64(3), intVal(t, first, "ernic.instances"), "the cluster's batch last")
	assert.Equal(t, int64(211), intVal(t, first, "ernic.commands", "ernic.id", "2"))
}

func TestFactoryStartFailsOnBadProcDir(t *testing.T) {
	f := newFixture(t, "basic")
	cfg := f.config(func(c *Config) { c.ProcDir = "/nonexistent/proc" })
	rcv, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	err = rcv.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, `proc_dir "/nonexistent/proc"`)
	require.NoError(t, rcv.Shutdown(context.Background()))
}

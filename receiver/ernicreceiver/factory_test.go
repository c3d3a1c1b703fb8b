package ernicreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// The receiver built by the factory scrapes on its own schedule and hands
// the metrics to the next consumer.
func TestFactoryReceiverDeliversMetrics(t *testing.T) {
	f := newFixture(t, "basic")
	cfg := f.config(func(c *Config) { c.CollectionInterval = MinCollectionInterval })
	sink := new(consumertest.MetricsSink)
	rcv, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, rcv.Shutdown(context.Background()))

	md := sink.AllMetrics()[0]
	assert.Equal(t, int64(3), intVal(t, md, "ernic.instances"))
	assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"))
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

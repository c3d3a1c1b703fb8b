// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// Environment of the writer process of TestTornWriteRace.
const (
	writerEnvPath   = "ERNIC_RACE_WRITER_STATS"
	writerEnvWrites = "ERNIC_RACE_WRITER_WRITES"
)

// rewrites is how many times the writer process rewrites the stats file.
const rewrites = 5000

// TestTornWriteRace runs a separate process that rewrites a stats file in
// place (truncate, then write through a 4 KiB stdio-like buffer, like the
// server) thousands of times with ever-growing counters and QPs, while the
// scraper scrapes as fast as it can. No published counter may ever go down
// and no start time may ever move: a torn read published as data would do
// one or the other.
func TestTornWriteRace(t *testing.T) {
	f := newFixture(t, "basic")
	statsPath := filepath.Join(f.runDir, "2.stats")

	cmd := exec.Command(os.Args[0], "-test.run=^TestRaceWriterProcess$")
	cmd.Env = append(os.Environ(), writerEnvPath+"="+statsPath, writerEnvWrites+"="+strconv.Itoa(rewrites))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// The writer's pid owns instance 2; its start time comes from /proc.
	f.write(t, "instances.json", fmt.Sprintf(`{"instances":[{"id":2,"role":"worker","pid":%d,"mac":"m","vm":null}]}`, cmd.Process.Pid), time.Now())
	cfg := f.config(func(c *Config) { c.ProcDir = "/proc" })
	s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, s.start(context.Background(), nil))

	type seen struct {
		value int64
		start pcommon.Timestamp
	}
	last := map[string]seen{}
	var scrapes, published, decreases, startMoves, qpCountDrops int
	var lastQPs int64 = -1
	for running := true; running; {
		select {
		case err := <-done:
			require.NoError(t, err, "writer process")
			running = false
		default:
		}
		md, _ := s.scrape(context.Background())
		scrapes++
		forEachSumPoint(md, func(key string, dp pmetric.NumberDataPoint) {
			published++
			if p, ok := last[key]; ok {
				if dp.IntValue() < p.value {
					decreases++
					t.Errorf("%s went down: %d after %d", key, dp.IntValue(), p.value)
				}
				if dp.StartTimestamp() != p.start {
					startMoves++
					t.Errorf("%s start moved: %v after %v", key, dp.StartTimestamp(), p.start)
				}
			}
			last[key] = seen{dp.IntValue(), dp.StartTimestamp()}
		})
		if dps := points(md, "ernic.qp.count"); len(dps) == 1 {
			if dps[0].IntValue() < lastQPs {
				qpCountDrops++
			}
			lastQPs = dps[0].IntValue()
		}
	}
	// The last scrape after the writer exited sees its final file.
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(rewrites-1), intVal(t, md, "ernic.stats.writes"))
	assert.Equal(t, int64(64), intVal(t, md, "ernic.qp.count"))

	assert.Zero(t, decreases)
	assert.Zero(t, startMoves)
	assert.Zero(t, qpCountDrops)
	assert.Greater(t, scrapes, 100, "the scraper raced the writer")
	t.Logf("torn-write race: %d rewrites, %d scrapes, %d counter points published, %d reads retried, %d reads still torn after retries (last snapshot kept), %d decreases, %d start moves",
		rewrites, scrapes, published, s.reader.Retries, s.reader.Failures, decreases, startMoves)
}

// TestRaceWriterProcess is the writer process of TestTornWriteRace; run
// directly it does nothing.
func TestRaceWriterProcess(t *testing.T) {
	path := os.Getenv(writerEnvPath)
	if path == "" {
		return
	}
	n, err := strconv.Atoi(os.Getenv(writerEnvWrites))
	require.NoError(t, err)
	st := fileStats{
		Socket: "/run/rocm-ernic/2.sock", Backend: "tcp:worker:127.0.0.1:6320", PCI: "0x1dd8:0x100a",
		MAC: "02:aa:00:00:00:02", Connection: "connected",
	}
	for i := range n {
		st.WriteCount = uint64(i)
		d := &st.Device
		d.Commands++
		d.Bar0Reads += 7
		d.Bar0Writes += 3
		d.UARWrites += 5
		d.Interrupts += 11
		d.BytesSent += 4096
		d.BytesReceived += 2048
		d.BytesRDMARead += 8192
		d.BytesRDMAWrite += 16384
		d.IPBytesTx += 1500
		d.IPBytesRx += 1400
		if len(st.QPs) < 64 && i%8 == 0 {
			st.QPs = append(st.QPs, fileQP{Handle: uint32(len(st.QPs)*7 + 1)})
		}
		for q := range st.QPs {
			qp := &st.QPs[q]
			qp.DoorbellSend += 2
			qp.DoorbellRecv++
			qp.WQEsProcessed += 3
			qp.CQEsPosted += 3
			qp.BytesSent += 4096
			qp.BytesReceived += 1024
			qp.BytesRDMARead += 512
			qp.BytesRDMAWrite += 256
			qp.Opcodes = []fileCounter{{Name: "SEND", Value: qp.WQEsProcessed / 3 * 2}, {Name: "RDMA_WRITE", Value: qp.WQEsProcessed / 3}}
		}
		// Rotate the QP order like the server's hash table does.
		if len(st.QPs) > 1 {
			st.QPs = append(st.QPs[1:], st.QPs[0])
		}
		st.LIF = st.LIF[:0]
		for j, name := range rundir.LIFCounterNames[:20] {
			st.LIF = append(st.LIF, fileCounter{Name: name, Value: uint64(i * (j + 1))})
		}
		require.NoError(t, writeStatsFile(path, &st))
		// Let a reader find whole files most of the time, as with the
		// real server's 1 Hz writes, yet race it thousands of times.
		time.Sleep(time.Duration(100+i%400) * time.Microsecond)
	}
	os.Exit(0)
}

// forEachSumPoint calls fn for every sum data point of md with a key made of
// the metric name and its sorted attributes.
func forEachSumPoint(md pmetric.Metrics, fn func(key string, dp pmetric.NumberDataPoint)) {
	forEachPoint(md, func(m pmetric.Metric, dp pmetric.NumberDataPoint) {
		if m.Type() != pmetric.MetricTypeSum {
			return
		}
		var attrs []string
		for k, v := range dp.Attributes().All() {
			attrs = append(attrs, k+"="+v.AsString())
		}
		sort.Strings(attrs)
		fn(m.Name()+"{"+strings.Join(attrs, ",")+"}", dp)
	})
}

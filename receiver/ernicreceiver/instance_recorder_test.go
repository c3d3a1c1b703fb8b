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
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// /proc mounted hidepid=invisible with the collector unprivileged:
// <proc_dir>/stat is readable but <proc_dir>/1 is not there. The receiver
// logs it once with the fix, and an instance whose process cannot be seen
// has no ernic.instance.up (its liveness cannot be known), not up=0.
func TestHidepidLivenessUnknown(t *testing.T) {
	f := newFixture(t, "basic")
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "1")))
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "4117"))) // root's server: hidden
	now := scrapeNow
	s, logs := observedScraper(t, f.config(), &now, zap.NewAtomicLevelAt(zap.WarnLevel))
	for range 2 {
		md, _ := s.scrape(context.Background())
		assert.Empty(t, points(md, "ernic.instance.up", "ernic.id", "2"), "liveness unknown: no up point")
		assert.Empty(t, points(md, "ernic.instance.uptime", "ernic.id", "2"))
		assert.Equal(t, int64(1), intVal(t, md, "ernic.instance.up", "ernic.id", "1"), "a visible process is still up")
		assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "3"), "a visible zombie is still down")
		assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"), "its counters are published")
		now = now.Add(5 * time.Second)
	}
	hp := logs.FilterMessageSnippet("hidepid")
	require.Equal(t, 1, hp.Len(), "%v", logs.All())
	assert.Contains(t, hp.All()[0].Message, "mount -o remount")

	// Without hidepid (the fixture has <proc_dir>/1) a missing process is
	// down.
	f = newFixture(t, "basic")
	require.NoError(t, os.RemoveAll(filepath.Join(f.procDir, "4117")))
	now = scrapeNow
	s, logs = observedScraper(t, f.config(), &now, zap.NewAtomicLevelAt(zap.WarnLevel))
	md, _ := s.scrape(context.Background())
	assert.Equal(t, int64(0), intVal(t, md, "ernic.instance.up", "ernic.id", "2"))
	assert.Zero(t, logs.FilterMessageSnippet("hidepid").Len())
}

func TestScrapeImplausibleLaunchedAt(t *testing.T) {
	for _, launched := range []string{"1900000000", "-5", "1e20", "1767225600250"} {
		t.Run(launched, func(t *testing.T) {
			f := newFixture(t, "basic")
			f.write(t, "instances.json", `{"instances":[{"id":2,"role":"worker","pid":4117,"vm":{"attached":true,"vm_pid":5230,"launched_at":`+launched+`}}]}`, scrapeNow)
			now := scrapeNow
			s := newTestScraper(t, f.config(), &now)
			md, err := s.scrape(context.Background())
			require.ErrorContains(t, err, "vm.launched_at")
			// The age of vm_pid 5230 (started at boot+600 s) instead.
			assert.InDelta(t, 100.0, one(t, md, "ernic.vm.uptime").DoubleValue(), 1e-9)
		})
	}
}

// A live server whose stats file is older than its process ends its series
// with a report, not silently; right after a start it is normal and quiet.
func TestStatsOlderThanProcess(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	f.touch(t, "2.stats", now.Add(-24*time.Hour))
	s := newTestScraper(t, f.config(), &now)
	md, err := s.scrape(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "before its server process (pid 4117) started")
	assert.Empty(t, points(md, "ernic.commands", "ernic.id", "2"))

	// A process that started 2 s ago has not written yet: no report.
	f = newFixture(t, "basic")
	f.setProc(t, 4117, "S", 69800) // boot+698 s
	f.touch(t, "2.stats", now.Add(-3*time.Second))
	s = newTestScraper(t, f.config(), &now)
	md, err = s.scrape(context.Background())
	if err != nil {
		assert.NotContains(t, err.Error(), "before its server process")
	}
	assert.Empty(t, points(md, "ernic.commands", "ernic.id", "2"))
}

func TestScrapeTornFileKeepsLastSnapshot(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	s.reader.Backoff = []time.Duration{0, 0}
	md := scrapeOK(t, s)
	require.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"))

	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name, torn string
		reported   bool // a new kind of fault for this file
	}{
		{"empty", "", true},
		{"cut in a line", string(whole[:900]), false},
		{"cut at a QP end", string(whole[:strings.Index(string(whole), "  QP 4:")]), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = now.Add(time.Second)
			f.write(t, "2.stats", tc.torn, now)
			md, err := s.scrape(context.Background())
			if tc.reported {
				require.Error(t, err)
				assert.True(t, scrapererror.IsPartialScrapeError(err))
				assert.Contains(t, err.Error(), "2.stats")
				assert.Contains(t, err.Error(), "publishing the last complete read")
			} else {
				require.Error(t, err)
				assert.True(t, onlyReported(err), "the same kind of fault is reported once per %s: %v", faultInterval, err)
			}
			assert.Equal(t, int64(211), intVal(t, md, "ernic.commands", "ernic.id", "2"), "the last complete read")
			assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.count", "ernic.id", "2"))
			assert.Len(t, points(md, "ernic.qp.bytes.sent", "ernic.id", "2"), 2)
			assert.Equal(t, int64(0), intVal(t, md, "ernic.commands", "ernic.id", "1"), "the other instance is unaffected")
		})
	}

	// After the interval the persisting fault is reported again.
	now = now.Add(faultInterval)
	_, err = s.scrape(context.Background())
	require.ErrorContains(t, err, "2.stats")
}

// A file with fewer QPs than the last read of the same process is a torn
// read; one that stays that way for shrunkLimit scrapes is taken as it is.
func TestScrapeShrunkFile(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	s.reader.Backoff = nil
	require.Equal(t, int64(2), intVal(t, scrapeOK(t, s), "ernic.qp.count", "ernic.id", "2"))

	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	qp4 := strings.Index(string(whole), "  QP 4:")
	lif := strings.Index(string(whole), "LIF Statistics:")
	oneQP := string(whole[:qp4]) + string(whole[lif:])
	for i := range shrunkLimit {
		now = now.Add(time.Second)
		f.write(t, "2.stats", oneQP, now)
		md, err := s.scrape(context.Background())
		if i == 0 {
			require.ErrorContains(t, err, "lost QP blocks")
		}
		assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.count", "ernic.id", "2"), "scrape %d keeps the last read", i)
	}
	now = now.Add(time.Second)
	f.write(t, "2.stats", oneQP, now)
	md := scrapeOK(t, s)
	assert.Equal(t, int64(1), intVal(t, md, "ernic.qp.count", "ernic.id", "2"))
	assert.Equal(t, tsOf(time.Unix(bootTime+25, 500_000_000)), commandsStart(t, md, "2"), "no counter went down: same start")
}

// After a server restart, until a file of the new process is accepted,
// there is no earlier file of that process to compare a new one's shape
// with: a file cut at a QP block boundary is complete in form. Its lack of
// the LIF block that the instance's earlier files had gives it away; it is
// not published (found by the soak: a QP count never written, 1765 of
// 10,000, published after torn writes at a restart).
func TestRestartCutAtQPBoundaryNotPublished(t *testing.T) {
	f := newFixture(t, "basic")
	now := scrapeNow
	s := newTestScraper(t, f.config(), &now)
	s.reader.Backoff = nil
	require.Equal(t, int64(2), intVal(t, scrapeOK(t, s), "ernic.qp.count", "ernic.id", "2"))
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)

	// The server restarts (hot-reload: pid 4300); the first read of its
	// file is cut after the first QP block.
	f.setProcComm(t, 4300, "rocm ernic (w)", 70200)
	f.write(t, "instances.json", `{"instances":[{"id":2,"role":"worker","pid":4300,"mac":"m","vm":null}]}`, now)
	cut := string(whole[:strings.Index(string(whole), "  QP 4:")])
	f.write(t, "2.stats", cut, time.Unix(bootTime+703, 0))
	now = now.Add(5 * time.Second)
	md, err := s.scrape(context.Background())
	require.ErrorContains(t, err, "no LIF block")
	assert.Empty(t, points(md, "ernic.qp.count", "ernic.id", "2"), "the cut file is not published")

	// The whole file of the new process is.
	f.write(t, "2.stats", string(whole), time.Unix(bootTime+704, 0))
	now = now.Add(5 * time.Second)
	md = scrapeOK(t, s)
	assert.Equal(t, int64(2), intVal(t, md, "ernic.qp.count", "ernic.id", "2"))
}

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

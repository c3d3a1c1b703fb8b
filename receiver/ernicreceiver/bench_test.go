// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// benchSizes are the run directories of `make bench`: instances × QPs per
// instance.
var benchSizes = []struct{ instances, qps int }{{1, 16}, {16, 64}, {64, 256}, {64, 1024}}

// writeBenchRunDir writes a run directory of instances × qps owned by this
// process, in the server's format (helpers_test.go): every QP with two opcode
// lines and an `(other opcodes)` line, every instance with the 74 LIF
// counters.
func writeBenchRunDir(tb testing.TB, instances, qps int) string {
	tb.Helper()
	dir := tb.TempDir()
	var manifest []manifestInstance
	for id := 1; id <= instances; id++ {
		manifest = append(manifest, manifestInstance{ID: id, Role: "worker", PID: os.Getpid(), MAC: fmt.Sprintf("02:aa:00:00:00:%02x", id)})
		st := fileStats{Connection: "connected", WriteCount: 100, MAC: "02:aa:00:00:00:01", Socket: "/run/rocm-ernic/1.sock",
			Backend: "tcp:worker:127.0.0.1:6320", PCI: "0x1dd8:0x100a"}
		st.Device = fileDevice{Commands: 5, Bar0Reads: 48810, Bar0Writes: 17020, UARWrites: 29931, Interrupts: 10440,
			BytesSent: 2097152, BytesReceived: 1048576, BytesRDMARead: 4194304, BytesRDMAWrite: 8388608, IPBytesTx: 512044, IPBytesRx: 498230}
		for q := range qps {
			st.QPs = append(st.QPs, fileQP{
				Handle: uint32(q*7 + 1), DoorbellSend: 512, DoorbellRecv: 256, WQEsProcessed: 771, CQEsPosted: 768,
				BytesSent: 2097152, BytesReceived: 1048576, BytesRDMARead: 4096, BytesRDMAWrite: 8388608,
				Opcodes: []fileCounter{{Name: "RDMA_WRITE", Value: 256}, {Name: "SEND", Value: 512}}, Other: true,
			})
		}
		for j, name := range rundir.LIFCounterNames {
			st.LIF = append(st.LIF, fileCounter{Name: name, Value: uint64(j * 1000)})
		}
		require.NoError(tb, writeStatsFile(filepath.Join(dir, fmt.Sprintf("%d.stats", id)), &st))
	}
	require.NoError(tb, writeManifestFile(filepath.Join(dir, rundir.ManifestFile), manifest))
	return dir
}

func sizeName(instances, qps int) string { return fmt.Sprintf("%dx%d", instances, qps) }

// BenchmarkFloor reads every file of the run directory into memory and
// splits it into lines: what any reader must at least do.
func BenchmarkFloor(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size.instances, size.qps), func(b *testing.B) {
			dir := writeBenchRunDir(b, size.instances, size.qps)
			entries, err := os.ReadDir(dir)
			require.NoError(b, err)
			var buf []byte
			// Each benchmark runs one untimed round first, so that the
			// timed ones measure the steady state of a collector that
			// reads the same files every interval (buffers grown, files
			// in the page cache), not the first read.
			floorRound := func() int {
				lines := 0
				for _, e := range entries {
					f, err := os.Open(filepath.Join(dir, e.Name()))
					if err != nil {
						b.Fatal(err)
					}
					buf = buf[:0]
					for {
						if len(buf) == cap(buf) {
							buf = append(buf, 0)[:len(buf)]
						}
						n, err := f.Read(buf[len(buf):cap(buf)])
						buf = buf[:len(buf)+n]
						if err != nil {
							break
						}
					}
					f.Close()
					for rest := buf; len(rest) > 0; lines++ {
						i := bytes.IndexByte(rest, '\n')
						if i < 0 {
							break
						}
						rest = rest[i+1:]
					}
				}
				return lines
			}
			if floorRound() == 0 {
				b.Fatal("no lines")
			}
			for b.Loop() {
				floorRound()
			}
		})
	}
}

// BenchmarkParse reads and parses the manifest and every stats file the way
// the scraper does (rundir.Reader through an os.Root, completeness checks
// included) into the parsed snapshots.
func BenchmarkParse(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size.instances, size.qps), func(b *testing.B) {
			dir := writeBenchRunDir(b, size.instances, size.qps)
			r := rundir.NewReader(DefaultMaxFileBytes)
			// Each file is parsed into the Stats of its previous parse, as
			// the scraper does.
			spares := map[string]*rundir.Stats{}
			parseRound := func() {
				root, err := os.OpenRoot(dir)
				if err != nil {
					b.Fatal(err)
				}
				m, err := r.ReadManifest(context.Background(), root)
				if err != nil {
					b.Fatal(err)
				}
				for i := range m.Instances {
					name := m.Instances[i].StatsFile()
					st, _, err := r.ReadStats(context.Background(), root, name, spares[name], nil)
					if err != nil {
						b.Fatal(err)
					}
					spares[name] = st
				}
				root.Close()
			}
			parseRound() // untimed, as in BenchmarkFloor
			for b.Loop() {
				parseRound()
			}
		})
	}
}

// BenchmarkScrape runs whole scrapes, files to the batches handed on
// (every file read and parsed: the unchanged-file shortcut is defeated;
// each batch dropped once handed on, as by a pipeline), with the
// default metrics and with every optional metric on, and reports the cost
// per published data point. BenchmarkUnchanged measures the shortcut for
// files that did not change.
func BenchmarkScrape(b *testing.B) {
	for _, metrics := range []string{"default", "all"} {
		for _, size := range benchSizes {
			b.Run(metrics+"/"+sizeName(size.instances, size.qps), func(b *testing.B) {
				cfg := createDefaultConfig().(*Config)
				cfg.RunDir = writeBenchRunDir(b, size.instances, size.qps)
				cfg.MaxQPsPerInstance = 0
				cfg.Metrics.ErnicQpWqesByOpcode.Enabled = metrics == "all"
				s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
				require.NoError(b, s.start(context.Background(), nil))
				_, err := s.scrape(context.Background()) // untimed, as in BenchmarkFloor
				require.NoError(b, err)
				var points int
				for b.Loop() {
					// A full scrape: no file counts as unchanged.
					for _, st := range s.instances {
						st.statsInfo = nil
					}
					// Each batch is dropped once handed on, as a
					// pipeline with a synchronous exporter does.
					points = 0
					err := s.scrapeEach(context.Background(), func(md pmetric.Metrics) {
						points += md.DataPointCount()
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				if want := size.instances * size.qps * len(qpCounters); points < want {
					b.Fatalf("%d points published, want at least the %d per-QP points", points, want)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(points), "ns/point")
				b.ReportMetric(float64(points), "points")
			})
		}
	}
}

// BenchmarkUnchanged measures what a scrape does with the files of a run
// directory in which nothing was rewritten since the last scrape: the
// manifest read (the same bytes are not parsed again) and one stat of each
// stats file (instanceState.unchanged), where BenchmarkParse reads and
// parses them. Recording the points, the rest of a scrape, is the same
// either way.
func BenchmarkUnchanged(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size.instances, size.qps), func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			cfg.RunDir = writeBenchRunDir(b, size.instances, size.qps)
			s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
			require.NoError(b, s.start(context.Background(), nil))
			// The files were just written: wait past the margin, so that
			// they count as unchanged after one read.
			time.Sleep(2 * unchangedMargin)
			_, err := s.scrape(context.Background())
			require.NoError(b, err)
			round := func() {
				errs := newScrapeErrors(s.faults, s.now())
				m, ok := s.readManifest(context.Background(), errs)
				if !ok {
					b.Fatal(errs.errs)
				}
				for i := range m.Instances {
					inst := &m.Instances[i]
					if !s.instances[inst.ID].unchanged(s.runDir, inst.StatsFile()) {
						b.Fatalf("%s counts as changed", inst.StatsFile())
					}
				}
				s.runDir.Close()
				s.runDir = nil
			}
			round() // untimed, as in BenchmarkFloor
			for b.Loop() {
				round()
			}
		})
	}
}

// BenchmarkRecordFloor builds, per op, one instance's per-QP points of the
// default metrics (8 metrics × 1024 QPs) in pdata the cheapest way its API
// allows: each point appended, its times and value set and its one qp
// attribute put, the batch dropped afterwards. No file is read and no
// state is kept: it is what recording any point through pdata costs at
// least (four allocations a point), the floor that BenchmarkScrape's
// ns/point is measured against.
func BenchmarkRecordFloor(b *testing.B) {
	qps := make([]string, 1024)
	for i := range qps {
		qps[i] = strconv.Itoa(i*7 + 1)
	}
	n := 0
	for b.Loop() {
		md := pmetric.NewMetrics()
		ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
		for range len(qpCounters) {
			dps := ms.AppendEmpty().SetEmptySum().DataPoints()
			dps.EnsureCapacity(len(qps))
			for _, q := range qps {
				dp := dps.AppendEmpty()
				dp.SetStartTimestamp(1)
				dp.SetTimestamp(2)
				dp.SetIntValue(3)
				a := dp.Attributes()
				a.EnsureCapacity(1)
				a.PutStr("qp", q)
			}
		}
		n += md.DataPointCount()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/point")
}

// timeScrapes returns how long the first and the second scrape of a run
// directory of n instances take.
func timeScrapes(t *testing.T, n int, opts ...func(*Config)) (first, second time.Duration) {
	dir := writeManyInstances(t, n)
	cfg := createDefaultConfig().(*Config)
	cfg.RunDir = dir
	for _, o := range opts {
		o(cfg)
	}
	now := time.Now()
	s := newTestScraper(t, cfg, &now)
	for i := range 2 {
		begin := time.Now()
		require.NoError(t, s.scrapeEach(context.Background(), func(pmetric.Metrics) {}))
		if i == 0 {
			first = time.Since(begin)
		} else {
			second = time.Since(begin)
		}
		now = now.Add(5 * time.Second)
	}
	return first, second
}

// TestMeasureScale logs the time of two scrapes of 5k to 40k instances
// (ERNIC_MEASURE=1 go test -run TestMeasureScale -v).
func TestMeasureScale(t *testing.T) {
	if os.Getenv("ERNIC_MEASURE") == "" {
		t.Skip("ERNIC_MEASURE unset")
	}
	for _, n := range []int{5000, 10000, 20000, 40000} {
		first, second := timeScrapes(t, n, func(c *Config) { c.MaxInstances = 0 })
		t.Logf("%d instances, no cap: first %v, second %v", n, first, second)
		first, second = timeScrapes(t, n)
		t.Logf("%d instances, default cap: first %v, second %v", n, first, second)
	}
}

// allocsBaseline is testdata/bench/allocs.json: allocations of one steady
// scrape per run-directory size, as measured when the file was written.
type allocsBaseline struct {
	// ScrapeDefault maps a size ("16x64") to allocations per scrape with
	// the default metrics.
	ScrapeDefault map[string]float64 `json:"scrape_default"`
}

// maxAllocsPerPoint is the stated bound on allocations per published data
// point of a steady scrape: a bulk point takes 4 (the point, its int value,
// its attribute slice and the qp or counter string value, bulkPoints.add);
// the rest is the QP handle strings and a share of the per-instance work.
const maxAllocsPerPoint = 6

// TestScrapeAllocations fails when a steady scrape allocates more than 25 %
// over the stored baseline, or more than maxAllocsPerPoint per published
// point. Allocation counts are deterministic, unlike times, so this is the
// regression test of `make test`; speed is measured by `make bench`.
func TestScrapeAllocations(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench", "allocs.json"))
	require.NoError(t, err)
	var base allocsBaseline
	require.NoError(t, json.Unmarshal(raw, &base))

	for _, size := range []struct{ instances, qps int }{{1, 16}, {16, 64}} {
		name := sizeName(size.instances, size.qps)
		t.Run(name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.RunDir = writeBenchRunDir(t, size.instances, size.qps)
			s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
			require.NoError(t, s.start(context.Background(), nil))
			md, err := s.scrape(context.Background()) // the first scrape creates the state
			require.NoError(t, err)
			points := md.DataPointCount()

			allocs := testing.AllocsPerRun(3, func() {
				if _, err := s.scrape(context.Background()); err != nil {
					t.Fatal(err)
				}
			})
			want, ok := base.ScrapeDefault[name]
			require.True(t, ok, "no baseline for %s in testdata/bench/allocs.json", name)
			t.Logf("%s: %.0f allocations per scrape, %d points, %.2f per point (baseline %.0f)", name, allocs, points, allocs/float64(points), want)
			assert.LessOrEqual(t, allocs, want*1.25, "allocations regressed by more than 25%% against the baseline")
			assert.LessOrEqual(t, allocs/float64(points), float64(maxAllocsPerPoint))
		})
	}
}

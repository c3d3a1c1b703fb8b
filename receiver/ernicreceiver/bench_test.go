package ernicreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// writeBenchRunDir writes a run directory of instances × qps, every QP with
// opcode lines, every instance with the 74 LIF counters, owned by this
// process.
func writeBenchRunDir(tb testing.TB, instances, qps int) string {
	tb.Helper()
	dir := tb.TempDir()
	var manifest []sim.Instance
	for id := 1; id <= instances; id++ {
		manifest = append(manifest, sim.Instance{ID: id, Role: "worker", PID: os.Getpid(), MAC: fmt.Sprintf("02:aa:00:00:00:%02x", id)})
		st := sim.Stats{Connection: "connected", WriteCount: 100, MAC: "m", Socket: "s", Backend: "b", PCI: "p"}
		st.Device.Commands = 5
		for q := range qps {
			st.QPs = append(st.QPs, sim.QP{
				Handle: uint32(q + 1), DoorbellSend: 1, DoorbellRecv: 2, WQEsProcessed: 9, CQEsPosted: 9,
				BytesSent: 4096, BytesReceived: 4096, BytesRDMARead: 8192, BytesRDMAWrite: 8192,
				Opcodes: []sim.Counter{{Name: "SEND", Value: 4}, {Name: "RDMA_WRITE", Value: 4}}, Other: true,
			})
		}
		for j, name := range sim.LIFNames {
			st.LIF = append(st.LIF, sim.Counter{Name: name, Value: uint64(j)})
		}
		require.NoError(tb, sim.WriteStatsInPlace(filepath.Join(dir, fmt.Sprintf("%d.stats", id)), &st))
	}
	require.NoError(tb, sim.WriteManifestInPlace(filepath.Join(dir, "instances.json"), manifest))
	return dir
}

func BenchmarkScrape(b *testing.B) {
	for _, size := range []struct{ instances, qps int }{{1, 16}, {16, 64}, {4, 1024}, {1, 4096}} {
		b.Run(fmt.Sprintf("%dx%d", size.instances, size.qps), func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			cfg.RunDir = writeBenchRunDir(b, size.instances, size.qps)
			cfg.MaxQPsPerInstance = 0
			s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type))
			require.NoError(b, s.start(context.Background(), nil))
			var points int
			for b.Loop() {
				md, err := s.scrape(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				points = md.DataPointCount()
			}
			if want := size.instances * size.qps * len(qpCounters); points < want {
				b.Fatalf("%d points published, want at least the %d per-QP points", points, want)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(points), "ns/point")
		})
	}
}

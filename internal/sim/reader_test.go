// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The helpers of the simulator's tests: a tiny reader of the stats format
// (rundir/README.md §3.1), independent of FormatStats, the manifest, and
// process liveness.

type parsed struct {
	writeCount uint64
	conn       string
	dev        map[string]uint64
	qps        map[string]map[string]uint64 // handle -> key (opcodes as "op:NAME")
	lif        map[string]uint64
}

// parseStats parses text; it fails on a file that is not complete (empty or
// cut by a racing write) and on anything it does not understand.
func parseStats(text string, wantLIF bool) (*parsed, error) {
	if !strings.HasSuffix(text, "Per-QP Statistics:\n") && !strings.HasSuffix(text, "\n\n") {
		return nil, fmt.Errorf("incomplete file (%d bytes)", len(text))
	}
	p := &parsed{dev: map[string]uint64{}, qps: map[string]map[string]uint64{}, lif: map[string]uint64{}}
	section, qp := "", ""
	sawWC, sawQPHeader := false, false
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		if line[0] != ' ' && strings.HasSuffix(line, ":") {
			section, qp = line, ""
			if line == "Per-QP Statistics:" {
				sawQPHeader = true
			}
			continue
		}
		trim := strings.TrimSpace(line)
		if h, ok := strings.CutPrefix(trim, "QP "); ok && section == "Per-QP Statistics:" && strings.HasSuffix(h, ":") {
			qp = strings.TrimSuffix(h, ":")
			p.qps[qp] = map[string]uint64{}
			continue
		}
		if trim == "WQEs by opcode:" || strings.HasPrefix(line, "===") {
			continue
		}
		k, v, ok := strings.Cut(trim, " : ")
		if !ok {
			return nil, fmt.Errorf("bad line %q", line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		n, nerr := strconv.ParseUint(v, 10, 64)
		switch {
		case k == "Write count":
			p.writeCount, sawWC = n, nerr == nil
		case section == "Instance:":
			if k == "connection" {
				p.conn = v
			}
		case nerr != nil:
			return nil, fmt.Errorf("non-numeric value in %q", line)
		case section == "Device Statistics:":
			p.dev[k] = n
		case section == "Per-QP Statistics:" && qp != "":
			if strings.HasPrefix(line, "      ") {
				k = "op:" + k
			}
			p.qps[qp][k] = n
		case strings.HasPrefix(section, "LIF"):
			p.lif[k] = n
		default:
			return nil, fmt.Errorf("line %q outside any section", line)
		}
	}
	if !sawWC || !sawQPHeader {
		return nil, fmt.Errorf("missing Write count or Per-QP header")
	}
	for _, k := range DeviceKeys {
		if _, ok := p.dev[k]; !ok {
			return nil, fmt.Errorf("missing device key %s", k)
		}
	}
	if len(p.dev) != len(DeviceKeys) {
		return nil, fmt.Errorf("%d device keys", len(p.dev))
	}
	if wantLIF && len(p.lif) != len(LIFNames) {
		return nil, fmt.Errorf("%d LIF keys", len(p.lif))
	}
	if p.dev["mmio_reads_total"] != p.dev["bar0_reads"]+p.dev["uar_reads"] ||
		p.dev["mmio_writes_total"] != p.dev["bar0_writes"]+p.dev["uar_writes"] {
		return nil, fmt.Errorf("mmio totals inconsistent: %v", p.dev)
	}
	return p, nil
}

// readStats reads path until it parses (a racing in-place write may show an
// empty or cut file for a moment).
func readStats(t *testing.T, path string, wantLIF bool) *parsed {
	t.Helper()
	var last error
	for range 200 {
		b, err := os.ReadFile(path)
		if err == nil {
			p, perr := parseStats(string(b), wantLIF)
			if perr == nil {
				return p
			}
			err = perr
		}
		last = err
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s never read complete: %v", path, last)
	return nil
}

func TestParseStatsOnSpecExample(t *testing.T) {
	b, err := os.ReadFile("testdata/spec-example.stats")
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseStats(string(b), false)
	if err != nil {
		t.Fatal(err)
	}
	if p.writeCount != 3071 || p.conn != "connected" || p.dev["reset_count"] != 1 ||
		p.qps["9"]["op:(other opcodes)"] != 3 || p.qps["4"]["bytes_rdma_read"] != 4194304 {
		t.Errorf("parser self-check failed: %+v", p)
	}
	if _, err := parseStats(string(b[:len(b)/2]), false); err == nil {
		t.Error("a cut file parsed as complete")
	}
}

// checkMonotonic reports every counter of a that is larger in b.
func checkMonotonic(t *testing.T, name string, a, b *parsed) {
	t.Helper()
	if b.writeCount <= a.writeCount {
		t.Errorf("%s: Write count %d -> %d", name, a.writeCount, b.writeCount)
	}
	for k, v := range a.dev {
		if b.dev[k] < v {
			t.Errorf("%s: device %s went down %d -> %d", name, k, v, b.dev[k])
		}
	}
	for k, v := range a.lif {
		if b.lif[k] < v {
			t.Errorf("%s: LIF %s went down %d -> %d", name, k, v, b.lif[k])
		}
	}
	for h, m := range a.qps {
		m2, ok := b.qps[h]
		if !ok {
			t.Errorf("%s: QP %s disappeared", name, h)
			continue
		}
		for k, v := range m {
			if m2[k] < v {
				t.Errorf("%s: QP %s %s went down %d -> %d", name, h, k, v, m2[k])
			}
		}
	}
}

type manifestEntry struct {
	ID     int    `json:"id"`
	Role   string `json:"role"`
	PID    int    `json:"pid"`
	MAC    string `json:"mac"`
	Socket string `json:"socket"`
	VM     *struct {
		Attached   bool    `json:"attached"`
		VMName     string  `json:"vm_name"`
		VMPID      int     `json:"vm_pid"`
		LaunchedAt float64 `json:"launched_at"`
		GPU        *string `json:"gpu"`
	} `json:"vm"`
}

func readManifest(t *testing.T, dir string) []manifestEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "instances.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Instances []manifestEntry `json:"instances"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest: %v\n%s", err, b)
	}
	return m.Instances
}

func pidAlive(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// syncBuffer is a Log writer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

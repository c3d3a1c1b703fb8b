// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chaosFile is a stats file with LIF counters and n QPs, as the simulator
// writes it.
func chaosFile(t *testing.T, n int) []byte {
	t.Helper()
	e := newEngine(3, 2, 0, n, 1)
	for range 6 {
		e.step(false)
	}
	st := e.stats(5, true)
	st.Socket, st.Backend, st.PCI, st.MAC, st.Connection = "/run/rocm-ernic/2.sock", "tcp:worker:127.0.0.1:6320", "0x1dd8:0x100a", "02:aa:00:00:00:02", "connected"
	var b bytes.Buffer
	if err := FormatStats(&b, &st); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestChaosCut: every torn-write kind cuts where it says, and never writes
// the whole file.
func TestChaosCut(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 8, 40} {
		b := chaosFile(t, n)
		for range 200 {
			for _, kind := range ChaosTornKinds {
				cut, what := chaosCut(kind, b, r.IntN)
				if cut < 0 || cut >= len(b) {
					t.Fatalf("%d QPs, %s: cut %d of %d bytes (%s)", n, kind, cut, len(b), what)
				}
				p := b[:cut]
				switch kind {
				case ChaosTornEmpty:
					if cut != 0 {
						t.Fatalf("%s: cut %d", kind, cut)
					}
				case ChaosTornLine:
					if cut == 0 || p[cut-1] == '\n' {
						t.Fatalf("%d QPs, %s: the prefix ends a line: %q (%s)", n, kind, p[max(0, cut-40):], what)
					}
				case ChaosTornQP:
					if n == 0 {
						break // falls back to a cut inside a line
					}
					if p[cut-1] != '\n' || bytes.HasSuffix(p, []byte("\n\n")) {
						t.Fatalf("%d QPs, %s: the prefix does not end inside a QP block: %q (%s)", n, kind, p[max(0, cut-60):], what)
					}
					if !bytes.Contains(p, []byte("\n  QP ")) {
						t.Fatalf("%d QPs, %s: no QP block in the prefix (%s)", n, kind, what)
					}
				case ChaosTornQPBoundary:
					if !bytes.HasSuffix(p, []byte("\n\n")) && !bytes.HasSuffix(p, []byte("Per-QP Statistics:\n")) {
						t.Fatalf("%d QPs, %s: the prefix is not whole in form: %q (%s)", n, kind, p[max(0, cut-60):], what)
					}
					if bytes.Count(p, []byte("\n  QP ")) >= n && bytes.Contains(b[cut:], []byte("\n  QP ")) {
						t.Fatalf("%d QPs, %s: the prefix has all QP blocks but QPs follow (%s)", n, kind, what)
					}
				case ChaosTornBuffer:
					if len(b) > StatsBufferSize && cut%StatsBufferSize != 0 {
						t.Fatalf("%d QPs, %s: cut %d is not a multiple of %d", n, kind, cut, StatsBufferSize)
					}
				}
			}
		}
	}
}

// chaosLog decodes the JSON-lines log of a chaos run.
func chaosLog(t *testing.T, data []byte) []ChaosRecord {
	t.Helper()
	var out []ChaosRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r ChaosRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChaosRun runs the chaos mode fast until every kind was injected, and
// checks the log and what is left in the run directory: every complete
// write logged once with consecutive Write counts per process, restarts
// counted and visible as new pids and generations, counters that only go
// down at a restart or a qp-reuse, and after Stop a whole manifest with live
// pids and every stats file equal to its last logged write.
func TestChaosRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a few seconds")
	}
	dir := filepath.Join(t.TempDir(), "run")
	var text syncBuffer
	s, err := New(Options{RunDir: dir, Instances: 4, QPs: 6, Interval: 50 * time.Millisecond, LIF: true, Seed: 11, Log: &text})
	if err != nil {
		t.Fatal(err)
	}
	var events syncBuffer
	c := startChaos(t, s, ChaosOptions{
		Events: &events, Every: 40 * time.Millisecond, TornEvery: 30 * time.Millisecond,
		HoldMin: 60 * time.Millisecond, HoldMax: 150 * time.Millisecond, RestartGap: 400 * time.Millisecond,
		MaxFileBytes: 64 << 10, HugeQPs: 300, Seed: 4,
	})
	want := append(slices.Clone(ChaosKinds), ChaosTornKinds...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := c.Counts()
		var missing []string
		for _, k := range want {
			if n.Faults[k]+n.Skipped[k] == 0 && k != ChaosRestart {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 && len(n.Restarts) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not injected within 30s: %v (counts %+v)", missing, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	counts := c.Counts()
	time.Sleep(120 * time.Millisecond) // a few more plain ticks
	insts := s.Instances()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("faults %v, skipped %v, restarts %v, writes %d", counts.Faults, counts.Skipped, counts.Restarts, counts.Writes)
	if os.Geteuid() == 0 {
		if counts.Skipped[ChaosUnreadableMode] == 0 || counts.Faults[ChaosUnreadableMode] != 0 {
			t.Errorf("as root, unreadable-chmod must be skipped: %+v", counts)
		}
	}

	recs := chaosLog(t, []byte(events.String()))
	// Per instance: writes in order, by process.
	type proc struct {
		gen, pid int
		writes   []ChaosRecord
	}
	procs := map[int][]*proc{}
	restarts := map[int]int{}
	faults := map[string]int{}
	for _, r := range recs {
		switch r.Event {
		case "write":
			ps := procs[r.ID]
			if len(ps) == 0 || ps[len(ps)-1].gen != r.Gen {
				ps = append(ps, &proc{gen: r.Gen, pid: r.PID})
				procs[r.ID] = ps
			}
			ps[len(ps)-1].writes = append(ps[len(ps)-1].writes, r)
		case "restart":
			restarts[r.ID]++
			if r.PID == r.OldPID || r.PID == 0 {
				t.Errorf("restart of %d: pid %d -> %d", r.ID, r.OldPID, r.PID)
			}
		case "fault":
			faults[r.Kind]++
		}
	}
	for k, n := range counts.Faults {
		if faults[k] != n {
			t.Errorf("fault %s: %d log records, counted %d", k, faults[k], n)
		}
	}
	for id, n := range counts.Restarts {
		if restarts[id] != n {
			t.Errorf("instance %d: %d restart records, counted %d", id, restarts[id], n)
		}
	}
	var huge int
	for _, r := range recs {
		if r.Event == "fault" && r.Kind == ChaosHugeInstance {
			huge = r.ID
		}
	}
	if huge == 0 {
		t.Fatal("no huge instance")
	}
	for id, ps := range procs {
		for i, p := range ps {
			if p.gen != i || (i > 0 && p.gen != ps[i-1].gen+1) {
				t.Errorf("instance %d: processes out of order: gen %d at %d", id, p.gen, i)
			}
			for j, w := range p.writes {
				if w.WriteCount != uint64(j) {
					t.Fatalf("instance %d gen %d: write %d has Write count %d (a complete write not logged, or logged twice)", id, p.gen, j, w.WriteCount)
				}
				if j == 0 {
					continue
				}
				prev := p.writes[j-1]
				for k, v := range w.Device {
					if v < prev.Device[k] {
						t.Errorf("instance %d gen %d write %d: %s went down %d -> %d", id, p.gen, j, k, prev.Device[k], v)
					}
				}
				for h, q := range w.QPs {
					pq, ok := prev.QPs[h]
					if !ok || pq.Epoch != q.Epoch {
						continue
					}
					for k, v := range q.Counters {
						if v < pq.Counters[k] {
							t.Errorf("instance %d gen %d write %d: QP %d %s went down %d -> %d in epoch %d", id, p.gen, j, h, k, pq.Counters[k], v, q.Epoch)
						}
					}
				}
			}
		}
		if len(ps)-1 != restarts[id] {
			t.Errorf("instance %d: %d processes wrote, %d restarts", id, len(ps), restarts[id])
		}
	}
	if w := procs[huge][len(procs[huge])-1].writes; w[len(w)-1].QPCount != 300 {
		t.Errorf("huge instance %d: last write has %d QPs, want 300", huge, w[len(w)-1].QPCount)
	}

	// What is left: a whole manifest with live pids (the last ones), and
	// every stats file as its last logged write.
	m := readManifest(t, dir)
	if len(m) != len(insts) {
		t.Fatalf("manifest has %d instances, want %d", len(m), len(insts))
	}
	for _, e := range m {
		ps := procs[e.ID]
		last := ps[len(ps)-1]
		if e.PID != last.pid {
			t.Errorf("instance %d: manifest pid %d, last writer %d", e.ID, e.PID, last.pid)
		}
		p := readStats(t, filepath.Join(dir, strconv.Itoa(e.ID)+".stats"), true)
		w := last.writes[len(last.writes)-1]
		if p.writeCount != w.WriteCount {
			t.Errorf("instance %d: file Write count %d, last logged write %d", e.ID, p.writeCount, w.WriteCount)
		}
		for k, v := range w.Device {
			if p.dev[k] != v {
				t.Errorf("instance %d: file %s = %d, last logged write %d", e.ID, k, p.dev[k], v)
			}
		}
		for name, v := range w.LIF {
			if p.lif[name] != v {
				t.Errorf("instance %d: file LIF %s = %d, last logged write %d", e.ID, name, p.lif[name], v)
			}
		}
	}
	if !strings.Contains(text.String(), "fault torn-line") {
		t.Errorf("the text log has no fault lines:\n%s", text.String())
	}
}

// TestChaosNeedsRunningSim: Start refuses a simulation that is not running,
// and NewChaos unknown kinds.
func TestChaosNeedsRunningSim(t *testing.T) {
	s, err := New(Options{RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewChaos(s, ChaosOptions{Kinds: []string{"meteor"}}); err == nil {
		t.Error("NewChaos accepted an unknown kind")
	}
	c, err := NewChaos(s, ChaosOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if err := c.Start(context.Background()); err == nil {
		t.Error("Start on a simulation that was not started: no error")
	}
}

// startChaos starts s and then chaos with options o on it; both are
// stopped when the test ends (Stop may also be called before).
func startChaos(t *testing.T, s *Sim, o ChaosOptions) *Chaos {
	t.Helper()
	c, err := NewChaos(s, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

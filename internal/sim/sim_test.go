// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSimStartRestartRemoveStop(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs /proc")
	}
	dir := filepath.Join(t.TempDir(), "run") // Start must create it
	var log syncBuffer
	s, err := New(Options{RunDir: dir, Instances: 3, QPs: 4, Interval: 200 * time.Millisecond, LIF: true, Seed: 7, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()

	// Manifest: three instances with live pids of their own.
	m := readManifest(t, dir)
	if len(m) != 3 {
		t.Fatalf("manifest has %d instances", len(m))
	}
	pids := map[int]int{}
	for i, e := range m {
		if e.ID != i+1 || e.Socket != filepath.Join(dir, fmt.Sprintf("%d.sock", e.ID)) {
			t.Errorf("entry %d: %+v", i, e)
		}
		if !pidAlive(e.PID) {
			t.Errorf("instance %d pid %d not in /proc", e.ID, e.PID)
		}
		if e.PID == os.Getpid() {
			t.Errorf("instance %d uses the simulator's pid: children did not start\n%s", e.ID, log.String())
		}
		if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", e.PID)); !bytes.Contains(cmdline, []byte("\x00hold")) {
			t.Errorf("instance %d pid %d cmdline %q", e.ID, e.PID, cmdline)
		}
		pids[e.ID] = e.PID
		switch e.ID {
		case 1:
			if e.Role != "manager" || e.VM != nil {
				t.Errorf("manager entry %+v", e)
			}
		default:
			if e.Role != "worker" || e.VM == nil || !e.VM.Attached || e.VM.VMName == "" ||
				!pidAlive(e.VM.VMPID) || e.VM.LaunchedAt < float64(time.Now().Add(-time.Minute).Unix()) || e.VM.GPU == nil {
				t.Errorf("worker entry %+v vm %+v", e, e.VM)
			}
		}
	}
	if len(map[int]bool{pids[1]: true, pids[2]: true, pids[3]: true}) != 3 {
		t.Errorf("pids not distinct: %v", pids)
	}
	if g := *m[1].VM.GPU; g != "0000:c1:00.0" {
		t.Errorf("instance 2 gpu %q", g)
	}
	if g := *m[2].VM.GPU; g != "" {
		t.Errorf("instance 3 gpu %q", g)
	}

	// Startup file of the manager; it has no VM so it is not rewritten.
	p1 := readStats(t, filepath.Join(dir, "1.stats"), true)
	if p1.writeCount != 0 || p1.conn != "(not set)" || len(p1.qps) != 0 || p1.dev["commands"] != 0 {
		t.Errorf("manager startup file: %+v", p1)
	}

	time.Sleep(1200 * time.Millisecond)
	a2 := readStats(t, filepath.Join(dir, "2.stats"), true)
	a3 := readStats(t, filepath.Join(dir, "3.stats"), true)
	time.Sleep(1300 * time.Millisecond)
	b2 := readStats(t, filepath.Join(dir, "2.stats"), true)
	b3 := readStats(t, filepath.Join(dir, "3.stats"), true)
	checkMonotonic(t, "2.stats", a2, b2)
	checkMonotonic(t, "3.stats", a3, b3)
	for name, p := range map[string]*parsed{"2.stats": b2, "3.stats": b3} {
		if p.writeCount < 6 {
			t.Errorf("%s: Write count %d after 2.5 s at 200ms", name, p.writeCount)
		}
		if p.conn != "connected" {
			t.Errorf("%s: connection %q", name, p.conn)
		}
		if len(p.qps) != 4 {
			t.Errorf("%s: %d QPs, want 4", name, len(p.qps))
		}
		if p.dev["total_bytes_rdma_write"]+p.dev["total_bytes_rdma_read"] == 0 || p.dev["total_ip_bytes_tx"] == 0 ||
			p.dev["interrupts"] == 0 || p.dev["commands"] == 0 || p.lif["tx_ucast_packets"] == 0 || p.lif["rx_rdma_ucast_bytes"] == 0 {
			t.Errorf("%s: counters did not move: %v %v", name, p.dev, p.lif)
		}
		if p.dev["total_bytes_rdma_write"] <= a2.dev["total_bytes_rdma_write"] && name == "2.stats" {
			t.Errorf("%s: traffic stopped", name)
		}
	}
	if p := readStats(t, filepath.Join(dir, "1.stats"), true); p.writeCount != 0 {
		t.Errorf("manager rewritten without a VM: Write count %d", p.writeCount)
	}
	if st, ok := s.Snapshot(2); !ok || st.WriteCount < b2.writeCount || st.Connection == "" {
		t.Errorf("Snapshot(2) = %+v, %v", st.WriteCount, ok)
	}
	if !strings.Contains(log.String(), "wrote "+filepath.Join(dir, "2.stats")+" write_count=5\n") {
		t.Errorf("log lacks the 6th write of 2.stats:\n%s", log.String())
	}

	// Restart: new pid, counters and Write count from zero.
	if err := s.Restart(2); err != nil {
		t.Fatal(err)
	}
	m = readManifest(t, dir)
	if m[1].ID != 2 || m[1].PID == pids[2] || !pidAlive(m[1].PID) {
		t.Errorf("after Restart(2): pid %d (old %d)", m[1].PID, pids[2])
	}
	if pidAlive(pids[2]) {
		t.Errorf("old server pid %d still alive", pids[2])
	}
	r2 := readStats(t, filepath.Join(dir, "2.stats"), true)
	if r2.writeCount > 2 || r2.dev["commands"] >= b2.dev["commands"] {
		t.Errorf("after Restart: Write count %d commands %d (before %d)", r2.writeCount, r2.dev["commands"], b2.dev["commands"])
	}
	time.Sleep(500 * time.Millisecond)
	r2b := readStats(t, filepath.Join(dir, "2.stats"), true)
	checkMonotonic(t, "2.stats after restart", r2, r2b)

	// Remove: gone from the manifest, stats file kept, child killed.
	if err := s.Remove(3); err != nil {
		t.Fatal(err)
	}
	m = readManifest(t, dir)
	if len(m) != 2 || m[0].ID != 1 || m[1].ID != 2 {
		t.Errorf("manifest after Remove(3): %+v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, "3.stats")); err != nil {
		t.Errorf("3.stats removed: %v", err)
	}
	if pidAlive(pids[3]) {
		t.Errorf("removed instance's pid %d still alive", pids[3])
	}
	if err := s.Restart(3); err == nil {
		t.Error("Restart of a removed instance succeeded")
	}

	// Stop: shutdown write, children gone, directory kept.
	cur := map[int]int{}
	for _, e := range m {
		cur[e.ID] = e.PID
	}
	before, _ := s.Snapshot(2)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	for id, pid := range cur {
		if pidAlive(pid) {
			t.Errorf("instance %d pid %d alive after Stop", id, pid)
		}
	}
	if p := readStats(t, filepath.Join(dir, "1.stats"), true); p.writeCount != 1 || p.conn != "(not set)" {
		t.Errorf("manager shutdown write: Write count %d conn %q", p.writeCount, p.conn)
	}
	if p := readStats(t, filepath.Join(dir, "2.stats"), true); p.writeCount != before.WriteCount+1 || p.dev["commands"] != before.Device.Commands {
		t.Errorf("shutdown write of 2: Write count %d (last %d)", p.writeCount, before.WriteCount)
	}
	if err := s.Restart(2); err == nil {
		t.Error("Restart after Stop succeeded")
	}
}

func TestRunUntilCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	if err := Run(ctx, Options{RunDir: dir, Instances: 2, QPs: 2, Interval: 100 * time.Millisecond, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, dir)
	if len(m) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	for _, e := range m {
		if pidAlive(e.PID) && e.PID != os.Getpid() {
			t.Errorf("pid %d alive after Run returned", e.PID)
		}
	}
	p := readStats(t, filepath.Join(dir, "2.stats"), false)
	if p.writeCount < 4 || len(p.lif) != 0 || len(p.qps) != 2 {
		t.Errorf("2.stats after Run: %+v", p)
	}
}

func TestNewRequiresRunDir(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without RunDir succeeded")
	}
	s, err := New(Options{RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
}

// manualSim starts a simulation whose ticker never fires (Interval 1h, so a
// device reset comes every tick); the test drives it with s.tick().
func manualSim(t *testing.T, seed int64) *Sim {
	t.Helper()
	s, err := New(Options{RunDir: t.TempDir(), Instances: 4, QPs: 6, Interval: time.Hour, LIF: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	if s.resetEvery != 1 {
		t.Fatalf("resetEvery = %d, want 1 at Interval 1h", s.resetEvery)
	}
	return s
}

func TestDeviceResetAndDeterminism(t *testing.T) {
	a, b, c := manualSim(t, 42), manualSim(t, 42), manualSim(t, 43)
	resets := map[int]uint64{}
	for tick := 1; tick <= 12; tick++ {
		a.tick()
		b.tick()
		c.tick()
		nReset := 0
		for id := 2; id <= 4; id++ {
			st, _ := a.Snapshot(id)
			if st.Connection == "connected (device reset)" {
				nReset++
				resets[id]++
			} else if st.Connection != "connected" {
				t.Errorf("tick %d: instance %d connection %q", tick, id, st.Connection)
			}
			if st.Device.ResetCount != resets[id] {
				t.Errorf("tick %d: instance %d reset_count %d, want %d", tick, id, st.Device.ResetCount, resets[id])
			}
		}
		if nReset != 1 {
			t.Errorf("tick %d: %d instances reset, want 1", tick, nReset)
		}
	}
	differs := false
	sawOther, sawErr := false, false
	for id := 1; id <= 4; id++ {
		sa, _ := a.Snapshot(id)
		sb, _ := b.Snapshot(id)
		sc, _ := c.Snapshot(id)
		sa.Socket, sb.Socket, sc.Socket = "", "", ""
		if !reflect.DeepEqual(sa, sb) {
			t.Errorf("instance %d: same seed, different stats:\n%+v\n%+v", id, sa, sb)
		}
		if id > 1 && !reflect.DeepEqual(sa, sc) {
			differs = true
		}
		for _, q := range sa.QPs {
			sawOther = sawOther || q.Other
			var sum uint64
			for _, op := range q.Opcodes {
				sum += op.Value
			}
			if sum > q.WQEsProcessed || (sum < q.WQEsProcessed) != q.Other || q.CQEsPosted > q.WQEsProcessed {
				t.Errorf("instance %d QP %d inconsistent: %+v", id, q.Handle, q)
			}
		}
		for _, l := range sa.LIF {
			if strings.HasPrefix(l.Name, "rdma_") && l.Value > 0 {
				sawErr = true
			}
		}
	}
	if !differs {
		t.Error("seeds 42 and 43 gave identical stats")
	}
	if !sawOther {
		t.Error("no (other opcodes) line in 3x6 QPs after 12 ticks")
	}
	_ = sawErr // RDMA errors are rare (1 in 20 ticks); not asserted for one seed
}

func TestEngineMonotonic(t *testing.T) {
	e := newEngine(5, 2, 0, 8, 1)
	render := func(rot uint64) Stats {
		st := e.stats(rot, true)
		st.Socket, st.Backend, st.PCI, st.MAC, st.Connection = "/x/2.sock", "loopback", "(not set)", "02:aa:00:00:00:02", "connected"
		return st
	}
	prev := render(0)
	for i := range 200 {
		e.step(i%50 == 0)
		cur := render(uint64(i))
		pa, err := parseStats(format(t, &prev), true)
		if err != nil {
			t.Fatalf("step %d: engine output does not parse: %v", i, err)
		}
		pb, err := parseStats(format(t, &cur), true)
		if err != nil {
			t.Fatalf("step %d: engine output does not parse: %v", i, err)
		}
		pb.writeCount = pa.writeCount + 1
		checkMonotonic(t, fmt.Sprintf("step %d", i), pa, pb)
		prev = cur
	}
	if len(prev.QPs) != 8 {
		t.Errorf("%d QPs, want 8", len(prev.QPs))
	}
	var errs uint64
	for _, l := range prev.LIF {
		if strings.HasPrefix(l.Name, "rdma_") {
			errs += l.Value
		}
	}
	if errs == 0 {
		t.Error("no RDMA error counter moved in 200 steps")
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// startForEvents starts a simulation of four instances (manager 1, workers
// 2-4) ticking every interval.
func startForEvents(t *testing.T, interval time.Duration) (*Sim, string) {
	t.Helper()
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	s, err := New(Options{RunDir: dir, Instances: 4, QPs: 2, Interval: interval, LIF: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s, dir
}

// TestSimEventWrites: Reset, FLR, LIFBurst and Disconnect write the file at
// once with their change. The simulation never ticks (an hour's interval),
// so every write seen is the event's.
func TestSimEventWrites(t *testing.T) {
	s, dir := startForEvents(t, time.Hour)
	for _, ev := range []struct {
		name string
		id   int
		conn string
		do   func(int) error
	}{
		{"Reset", 2, "connected (device reset)", s.Reset},
		{"FLR", 3, "connected (PCI FLR)", s.FLR},
	} {
		before, _ := s.Snapshot(ev.id)
		if err := ev.do(ev.id); err != nil {
			t.Fatalf("%s: %v", ev.name, err)
		}
		after, _ := s.Snapshot(ev.id)
		if after.Connection != ev.conn || after.Device.ResetCount != before.Device.ResetCount+1 ||
			after.WriteCount != before.WriteCount+1 {
			t.Errorf("%s(%d): last write %q, Write count %d -> %d, reset_count %d -> %d", ev.name, ev.id,
				after.Connection, before.WriteCount, after.WriteCount, before.Device.ResetCount, after.Device.ResetCount)
		}
	}

	// LIFBurst: the counters grow by the burst, at once; unknown names and
	// the manager (no VM) are refused.
	burst := map[string]uint64{"rdma_req_rx_pkt_seq_err": 1000, "rx_ucast_drop_packets": 7}
	before, _ := s.Snapshot(3)
	if err := s.LIFBurst(3, burst); err != nil {
		t.Fatal(err)
	}
	p := readStats(t, filepath.Join(dir, "3.stats"), true)
	for name, n := range burst {
		if got := p.lif[name]; got != lifOf(before, name)+n {
			t.Errorf("LIFBurst: %s = %d, want %d + %d", name, got, lifOf(before, name), n)
		}
	}
	if err := s.LIFBurst(3, map[string]uint64{"no_such_counter": 1}); err == nil {
		t.Error("LIFBurst accepted an unknown counter")
	}
	if err := s.LIFBurst(1, burst); err == nil {
		t.Error("LIFBurst accepted the manager, which has no VM")
	}

	if err := s.Disconnect(4); err != nil {
		t.Fatal(err)
	}
	if p := readStats(t, filepath.Join(dir, "4.stats"), true); p.conn != "disconnected (lost connection)" {
		t.Errorf("Disconnect: connection %q", p.conn)
	}
}

// TestSimEventHolds: Stall, Disconnect and Kill stop an instance's file
// from moving, and only that one; Resume (Restart after a Kill) ends them.
func TestSimEventHolds(t *testing.T) {
	const interval = 100 * time.Millisecond
	s, dir := startForEvents(t, interval)
	path := func(id string) string { return filepath.Join(dir, id+".stats") }
	mtime := func(id string) time.Time {
		fi, err := os.Stat(path(id))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	time.Sleep(5 * interval)

	// Stall: the file keeps "connected" and stops moving; the others move.
	if err := s.Stall(2); err != nil {
		t.Fatal(err)
	}
	stalled, other := mtime("2"), mtime("4")
	time.Sleep(5 * interval)
	if p := readStats(t, path("2"), true); !mtime("2").Equal(stalled) || p.conn != "connected" {
		t.Errorf("Stall: 2.stats moved (%v -> %v) or is not connected (%q)", stalled, mtime("2"), p.conn)
	}
	if !mtime("4").After(other) {
		t.Error("Stall(2) stopped 4.stats too")
	}
	if err := s.Reset(2); err == nil {
		t.Error("Reset of a stalled instance was accepted")
	}
	if err := s.Resume(2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * interval)
	if !mtime("2").After(stalled) {
		t.Error("Resume(2): 2.stats does not move again")
	}

	// Disconnect: no more writes until Resume, which writes "connected"
	// again.
	if err := s.Disconnect(4); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * interval)
	at := mtime("4")
	time.Sleep(4 * interval)
	if !mtime("4").Equal(at) {
		t.Error("Disconnect: 4.stats still moves without a client")
	}
	if err := s.Resume(4); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * interval)
	if p := readStats(t, path("4"), true); p.conn != "connected" {
		t.Errorf("Resume after Disconnect: connection %q", p.conn)
	}

	// Kill: the pid is gone, the manifest keeps it, the file stops;
	// Resume refuses; Restart brings a new process whose file moves again.
	old := s.Instances()[2].PID // instance 3
	if err := s.Kill(3); err != nil {
		t.Fatal(err)
	}
	if pidAlive(old) {
		t.Errorf("Kill(3): pid %d still alive", old)
	}
	if m := readManifest(t, dir); len(m) != 4 || m[2].PID != old {
		t.Errorf("Kill(3) changed the manifest: %+v", m)
	}
	killed := mtime("3")
	time.Sleep(4 * interval)
	if !mtime("3").Equal(killed) {
		t.Error("Kill(3): 3.stats still moves")
	}
	if err := s.Resume(3); err == nil {
		t.Error("Resume of a killed instance was accepted")
	}
	if err := s.Restart(3); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * interval)
	if p := readStats(t, path("3"), true); p.writeCount == 0 || p.conn != "connected" {
		t.Errorf("Restart after Kill: Write count %d, connection %q", p.writeCount, p.conn)
	}
	if pid := s.Instances()[2].PID; pid == old || !pidAlive(pid) {
		t.Errorf("Restart after Kill: pid %d (old %d)", pid, old)
	}
}

func lifOf(st Stats, name string) uint64 {
	for _, c := range st.LIF {
		if c.Name == name {
			return c.Value
		}
	}
	return 0
}

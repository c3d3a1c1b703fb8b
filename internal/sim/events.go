// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"errors"
	"fmt"
	"slices"
)

// Events on demand, for tests that need a fault at a known time (the
// dashboard and alert tests of test/e2e). The ticks skip a held instance
// (Stall, Disconnect, Kill), its periodic device reset included.

// Connection states of the events (rundir/README.md §3.3), beside those of sim.go.
const (
	connFLR  = "connected (PCI FLR)"
	connLost = "disconnected (lost connection)"
)

// hold marks a server process whose stats file the ticks leave alone. It
// names the process (pid), so Restart, which starts a new one, ends it.
type hold struct {
	pid    int
	reason string // "stalled", "disconnected" or "killed"
}

// held is called with s.mu held.
func (in *inst) held() bool { return in.hold != nil && in.hold.pid == in.PID }

// attachedInst returns the running, attached instance id whose file the
// ticks write. Called with s.mu held.
func (s *Sim) attachedInst(id int) (*inst, error) {
	in, err := s.find(id)
	if err != nil {
		return nil, err
	}
	if !in.attached() {
		return nil, fmt.Errorf("sim: instance %d has no attached VM", id)
	}
	if in.held() {
		return nil, fmt.Errorf("sim: instance %d is %s", id, in.hold.reason)
	}
	return in, nil
}

// Reset gives instance id a device reset now, as the periodic one every
// ~60s does: one tick of traffic with reset_count+1 (plus the reset's
// commands and register accesses), written at once with the connection
// "connected (device reset)". The next tick writes "connected" again. The
// instance must be attached and not held (Stall, Disconnect, Kill).
func (s *Sim) Reset(id int) error { return s.resetWith(id, connReset) }

// FLR gives instance id a PCI function-level reset now: like Reset, but the
// write shows "connected (PCI FLR)".
func (s *Sim) FLR(id int) error { return s.resetWith(id, connFLR) }

func (s *Sim) resetWith(id int, conn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.attachedInst(id)
	if err != nil {
		return err
	}
	in.eng.step(true)
	return s.write(in, conn)
}

// LIFBurst adds counts to instance id's LIF counters (names from LIFNames,
// e.g. "rdma_req_rx_pkt_seq_err", "rx_ucast_drop_packets") and writes the
// file at once. It needs Options.LIF and an attached instance that is not
// held; nothing is added when a name is unknown.
func (s *Sim) LIFBurst(id int, counts map[string]uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.o.LIF {
		return errors.New("sim: LIFBurst needs Options.LIF")
	}
	in, err := s.attachedInst(id)
	if err != nil {
		return err
	}
	for name := range counts {
		if !slices.Contains(LIFNames[:], name) {
			return fmt.Errorf("sim: %q is not a LIF counter", name)
		}
	}
	for name, n := range counts {
		in.eng.addLIF(name, n)
	}
	return s.write(in, in.conn)
}

// Stall makes instance id's server stop writing its stats file while its
// client stays attached: the file keeps its last content, "connected"
// included, and its mtime ages. Resume ends it.
func (s *Sim) Stall(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.attachedInst(id)
	if err != nil {
		return err
	}
	in.hold = &hold{pid: in.PID, reason: "stalled"}
	return nil
}

// Disconnect makes instance id's client connection drop: one write with
// "disconnected (lost connection)", then, without a client, no more writes
// until Resume (the client is back: the next tick writes "connected").
func (s *Sim) Disconnect(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.attachedInst(id)
	if err != nil {
		return err
	}
	in.conn = connLost
	err = s.write(in, in.conn)
	in.hold = &hold{pid: in.PID, reason: "disconnected"}
	return err
}

// Resume ends a Stall or Disconnect of instance id: its file is rewritten
// from the next tick on. A killed instance comes back with Restart instead.
func (s *Sim) Resume(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.find(id)
	if err != nil {
		return err
	}
	switch {
	case !in.held():
		return fmt.Errorf("sim: instance %d is not stalled or disconnected", id)
	case in.hold.reason == "killed":
		return fmt.Errorf("sim: instance %d was killed; Restart starts a new server", id)
	}
	in.hold = nil
	return nil
}

// Kill makes instance id's server process die without a shutdown write and
// without leaving the manifest: its pid is gone, its stats file stays as
// the last write left it. Restart starts a new server process.
func (s *Sim) Kill(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.find(id)
	if err != nil {
		return err
	}
	if in.child == nil {
		return fmt.Errorf("sim: instance %d has no server process of its own to kill", id)
	}
	in.child.kill()
	in.child = nil
	in.hold = &hold{pid: in.PID, reason: "killed"}
	return nil
}

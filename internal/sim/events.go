// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"errors"
	"fmt"
	"slices"
)

// Events on demand, for tests that need a fault at a known time. The ticks
// skip a held instance (Stall, Disconnect, Kill).

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

// Reset gives instance id a device reset now, written at once with
// "connected (device reset)"; the next tick writes "connected". The instance
// must be attached and not held.
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

// LIFBurst adds counts to instance id's LIF counters and writes at once.
// It needs Options.LIF and an attached, not held instance.
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

// Stall stops instance id's stats writes while its client stays attached,
// until Resume.
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

// Disconnect writes "disconnected (lost connection)" once, then nothing
// until Resume.
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

// Kill kills instance id's server without a shutdown write, leaving the
// manifest and the file; Restart starts a new one.
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

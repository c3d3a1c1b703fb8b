// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// Simulated server processes: the children the simulator forks, whose pids
// go into the manifest, and the code they run.

// HoldArg is the first argument of a simulated server child: the simulator
// re-executes its own binary (os.Executable) as "<exe> hold" with HoldEnv=1
// in the environment. That binary must call HoldIfChild first thing (in
// main, or a test binary's TestMain), which holds in the child.
const HoldArg = "hold"

// HoldEnv is the environment variable that marks a simulated server child,
// with HoldArg as the first argument; see HoldIfChild.
const HoldEnv = "ERNIC_SIM_HOLD"

// canHold tells whether this binary called HoldIfChild, so that it can be
// re-executed as a server child; without it the simulator uses its own pid
// rather than start a binary that would run its tests (or main) again.
var canHold atomic.Bool

// HoldIfChild makes this binary able to be a simulated server child: when
// it is one (first argument HoldArg and HoldEnv=1) it holds and exits,
// otherwise it returns at once. Call it first thing in main, or in the
// TestMain of a test package that runs the simulator.
func HoldIfChild() {
	if len(os.Args) > 1 && os.Args[1] == HoldArg && os.Getenv(HoldEnv) == "1" {
		Hold()
		os.Exit(0)
	}
	canHold.Store(true)
}

// Hold blocks until standard input reaches EOF (the simulator closes the pipe
// or dies) or SIGINT, SIGTERM or SIGHUP arrives. It is the whole life of a
// simulated server child: a live process whose pid goes into the manifest.
func Hold() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-sig:
	case <-eof:
	}
	signal.Stop(sig)
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// spawn starts in's server child and sets in.PID. If that fails, in.PID falls
// back to the simulator's own pid (live, but shared) and the error is logged.
func (s *Sim) spawn(in *inst) {
	c, err := startChild()
	if err != nil {
		s.logf("error starting server child for instance %d: %v (using own pid)", in.ID, err)
		in.child = nil
		in.PID = os.Getpid()
		return
	}
	in.child = c
	in.PID = c.cmd.Process.Pid
}

func startChild() (*child, error) { return startChildExe("") }

// startChildExe starts a server child from exe, a link to this binary that
// gives the child its command name, or from this binary when exe is "".
func startChildExe(exe string) (*child, error) {
	if !canHold.Load() {
		return nil, errors.New("this binary does not call sim.HoldIfChild in its main or TestMain")
	}
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(exe, HoldArg)
	cmd.Env = append(os.Environ(), HoldEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &child{cmd: cmd, stdin: stdin}, nil
}

// kill closes the child's stdin, kills it and reaps it. Safe on nil.
func (c *child) kill() {
	if c == nil {
		return
	}
	_ = c.stdin.Close()
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

func (s *Sim) killAll() {
	for _, in := range s.insts {
		in.child.kill()
		in.child = nil
	}
}

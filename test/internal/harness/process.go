// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Launch describes a child process a test runs.
type Launch struct {
	// Name names the process in messages ("collector", "prometheus").
	Name string
	// Path is the program; Args its arguments.
	Path string
	Args []string
	// Env is added to CleanEnv(DropEnv...); the process runs in the
	// repository root.
	Env     []string
	DropEnv []string
	// Log receives stdout, and stderr unless Stderr is set; a new buffer
	// when nil.
	Log    *LockedBuffer
	Stderr *LockedBuffer
	// StopWait, when not 0, stops the process when the test ends: SIGTERM,
	// then a kill after StopWait. KilledIsError makes a kill an error of
	// the test. With StopWait 0 the test stops the process itself.
	StopWait      time.Duration
	KilledIsError bool
}

// Process is a running child process of a test.
type Process struct {
	// Cmd is the started command.
	Cmd *exec.Cmd
	// Log is its output (stdout, and stderr unless Stderr is set).
	Log *LockedBuffer
	// Stderr is its stderr when the Launch split it, else nil.
	Stderr *LockedBuffer

	name    string
	exited  chan struct{}
	waitErr error
}

// Start starts l, failing the test when it cannot.
func Start(t testing.TB, l Launch) *Process {
	t.Helper()
	p := &Process{Log: l.Log, Stderr: l.Stderr, name: l.Name, exited: make(chan struct{})}
	if p.Log == nil {
		p.Log = &LockedBuffer{}
	}
	p.Cmd = exec.Command(l.Path, l.Args...)
	p.Cmd.Dir = RepoRoot(t)
	p.Cmd.Env = append(CleanEnv(l.DropEnv...), l.Env...)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Log, p.Log
	if p.Stderr != nil {
		p.Cmd.Stderr = p.Stderr
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("start %s %s: %v", l.Name, l.Path, err)
	}
	go func() {
		p.waitErr = p.Cmd.Wait()
		close(p.exited)
	}()
	if l.StopWait > 0 {
		t.Cleanup(func() {
			if p.Stop(l.StopWait) && l.KilledIsError {
				t.Errorf("%s did not stop within %v of SIGTERM; killed it", l.Name, l.StopWait)
			}
			if t.Failed() {
				t.Logf("%s command: %s\n%s log:\n%s", l.Name, strings.Join(p.Cmd.Args, " "), l.Name, p.Log.String())
			}
		})
	}
	return p
}

// StartCollector runs the collector (CollectorBinary) with args and
// CleanEnv plus env, its output in log (a new buffer when nil). When the
// test ends it is stopped with SIGTERM; one that does not stop within 15 s
// is killed and, when killedIsError, fails the test. Its command line and
// log are printed when the test failed.
func StartCollector(t testing.TB, args, env []string, log *LockedBuffer, killedIsError bool) *Process {
	t.Helper()
	return startCollector(t, CollectorBinary(t), args, env, log, killedIsError)
}

// StartTestBuildCollector is StartCollector with the test build
// (TestBuildBinary), for a collector that runs components the distribution
// leaves out.
func StartTestBuildCollector(t testing.TB, args, env []string, log *LockedBuffer, killedIsError bool) *Process {
	t.Helper()
	return startCollector(t, TestBuildBinary(t), args, env, log, killedIsError)
}

func startCollector(t testing.TB, bin string, args, env []string, log *LockedBuffer, killedIsError bool) *Process {
	t.Helper()
	return Start(t, Launch{
		Name: "collector", Path: bin, Args: args, Env: env, Log: log,
		StopWait: 15 * time.Second, KilledIsError: killedIsError,
	})
}

// ConfigArgs returns "--config c" for each of configs.
func ConfigArgs(configs ...string) []string {
	var args []string
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	return args
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is the process's exit (exec.Cmd.Wait's error) once Exited is closed.
func (p *Process) Err() error {
	select {
	case <-p.exited:
		return p.waitErr
	default:
		return nil
	}
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Pid is the process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Kill sends SIGKILL (a crash, or kill -9) and waits until the process has
// exited.
func (p *Process) Kill() error {
	if err := p.Cmd.Process.Kill(); err != nil {
		return err
	}
	<-p.exited
	return nil
}

// Stop sends SIGTERM and waits up to d; it kills the process after that.
// It returns whether the process had to be killed.
func (p *Process) Stop(d time.Duration) (killed bool) {
	if !p.Running() {
		return false
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return false
	case <-time.After(d):
		_ = p.Cmd.Process.Kill()
		<-p.exited
		return true
	}
}

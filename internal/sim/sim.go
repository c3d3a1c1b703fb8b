// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Options configures a simulation.
type Options struct {
	// RunDir is the simulated ERNIC_RUN_DIR; created if missing. Required.
	RunDir string
	// Instances is the number of instances: id 1 is the manager (no VM, written
	// only at startup and shutdown), the others workers with a VM. Default 3.
	Instances int
	// QPs is the number of QPs each attached instance ends up with; they
	// appear over the first four ticks. Default (0) 8; negative means none.
	QPs int
	// Interval is the time between two stats writes. Default (0) 1s.
	Interval time.Duration
	// LIF prints the "LIF Statistics:" block (74 counters) in every write.
	LIF bool
	// Seed makes everything but timing, pids and launched_at reproducible.
	Seed int64
	// Writes, when positive, stops the rewriting after that many ticks (a
	// static run directory, for benchmarks). Default (0) never.
	Writes int
	// Log, when set, receives "wrote <path> write_count=<N>" per completed
	// write and "error ..." lines. Writes to it are serialised.
	Log io.Writer
}

// Run runs a simulation until ctx is done (New, Start, Stop) and leaves the
// run directory in place.
func Run(ctx context.Context, o Options) error {
	s, err := New(o)
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Stop()
}

// Connection states written by the simulator (rundir/README.md §3.3).
const (
	connNotSet    = "(not set)"
	connConnected = "connected"
	connReset     = "connected (device reset)"
)

// resetPeriod is roughly how often one attached worker gets a device reset.
const resetPeriod = 60 * time.Second

// Sim is a running simulation (Run is New + Start + wait + Stop). All methods
// are safe for concurrent use.
type Sim struct {
	o          Options
	secs       float64 // Interval in seconds
	resetEvery uint64  // ticks between device resets

	mu      sync.Mutex
	insts   []*inst // instances in the manifest, by id
	last    map[int]Stats
	rng     *rand.Rand // device-reset choices
	ticks   uint64
	started bool
	stopped bool
	err     error // result of the shutdown

	stopc    chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	// wrote, when set, is called after every complete stats write with
	// what was written; chaos.go logs the values. Called with mu held.
	wrote func(in *inst, st *Stats)
}

type inst struct {
	Instance        // manifest entry
	backend  string // "backend" value of the stats file
	child    *child // nil when spawning failed (pid is then our own)
	eng      *engine
	gen      int    // restarts so far, part of the engine's seed
	writes   uint64 // completed stats writes of the current process
	conn     string // connection state outside of one-off events
	hold     *hold  // events.go: ticks leave this process's file alone
	// extraLIF and badConn are written while set: invalid-utf8's values.
	extraLIF []Counter
	badConn  string
}

// New validates o and applies the defaults; nothing is written yet.
func New(o Options) (*Sim, error) {
	if o.RunDir == "" {
		return nil, errors.New("sim: Options.RunDir is required")
	}
	if o.Instances <= 0 {
		o.Instances = 3
	}
	if o.QPs == 0 {
		o.QPs = 8
	} else if o.QPs < 0 {
		o.QPs = 0
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	every := uint64(math.Round(float64(resetPeriod) / float64(o.Interval)))
	if every < 1 {
		every = 1
	}
	return &Sim{
		o:          o,
		secs:       o.Interval.Seconds(),
		resetEvery: every,
		last:       make(map[int]Stats),
		rng:        rand.New(rand.NewPCG(uint64(o.Seed), 0x7e5e7)),
		stopc:      make(chan struct{}),
		done:       make(chan struct{}),
	}, nil
}

// Start creates the run directory, the server children and the files, then
// rewrites the attached instances' files every Interval. Call it once.
func (s *Sim) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("sim: already started")
	}
	if err := os.MkdirAll(s.o.RunDir, 0o755); err != nil {
		return err
	}
	now := float64(time.Now().UnixMicro()) / 1e6
	for id := 1; id <= s.o.Instances; id++ {
		in := s.newWorker(id)
		if id == 1 {
			in.Role = "manager"
			in.backend = "tcp:manager:listen:6320"
		} else {
			in.VM = s.newVM(id, now)
		}
		s.spawn(in)
		in.eng = newEngine(s.o.Seed, id, 0, s.o.QPs, s.secs)
		s.insts = append(s.insts, in)
	}
	fail := func(err error) error {
		s.killAll()
		s.insts = nil
		return err
	}
	if err := s.writeManifest(); err != nil {
		return fail(err)
	}
	for _, in := range s.insts {
		if err := s.write(in, in.conn); err != nil {
			return fail(err)
		}
	}
	s.started = true
	go s.loop(ctx)
	return nil
}

// newWorker returns worker id, not yet started, as the launcher lists it.
func (s *Sim) newWorker(id int) *inst {
	return &inst{
		Instance: Instance{
			ID:     id,
			Role:   "worker",
			MAC:    fmt.Sprintf("02:aa:00:00:00:%02x", id&0xff),
			Socket: filepath.Join(s.o.RunDir, fmt.Sprintf("%d.sock", id)),
		},
		backend: "tcp:worker:127.0.0.1:6320",
		conn:    connNotSet,
	}
}

// newVM returns worker id's VM; vm_pid is our own pid, as the simulator
// stands in for the VM launcher.
func (s *Sim) newVM(id int, now float64) *VM {
	name := fmt.Sprintf("train-%d", id)
	if id-2 < 26 {
		name = fmt.Sprintf("train-%c", 'a'+rune(id-2))
	}
	gpu := ""
	if id%2 == 0 {
		gpu = fmt.Sprintf("0000:%02x:00.0", 0xc1+(id-2)/2)
	}
	return &VM{
		Attached:   true,
		VMName:     name,
		VMPID:      os.Getpid(),
		LaunchedAt: now,
		GPU:        gpu,
		QMPSocket:  filepath.Join(s.o.RunDir, fmt.Sprintf("qmp-%d.sock", id)),
		DeviceID:   fmt.Sprintf("ernic%d", id),
		RootPort:   fmt.Sprintf("pcie-vfu.%d", id-1),
		SSHUser:    "ubuntu",
		SSHPort:    2221 + id,
	}
}

func (s *Sim) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.shutdown()
			return
		case <-s.stopc:
			s.shutdown()
			return
		case <-t.C:
			if n := s.tick(); s.o.Writes > 0 && n >= uint64(s.o.Writes) {
				t.Stop()
			}
		}
	}
}

// tick advances and rewrites every attached instance; every resetEvery
// ticks one attached worker gets a device reset. It returns the ticks so far.
func (s *Sim) tick() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.ticks
	}
	s.ticks++
	var reset *inst
	if s.ticks%s.resetEvery == 0 {
		var cands []*inst
		for _, in := range s.insts {
			if in.attached() {
				cands = append(cands, in)
			}
		}
		if len(cands) > 0 {
			reset = cands[s.rng.IntN(len(cands))]
		}
	}
	for _, in := range s.insts {
		if !in.attached() || in.held() {
			continue
		}
		in.eng.step(in == reset)
		in.conn = connConnected
		conn := connConnected
		if in == reset {
			conn = connReset
		}
		_ = s.write(in, conn) // logged; the server just tries again next second
	}
	return s.ticks
}

func (in *inst) attached() bool { return in.VM != nil && in.VM.Attached }

func (s *Sim) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	var errs []error
	for _, in := range s.insts {
		errs = append(errs, s.write(in, in.conn))
	}
	s.killAll()
	s.stopped = true
	s.err = errors.Join(errs...)
}

// Stop writes each instance's shutdown file, kills the children and waits.
// Idempotent; nil when Start was never called.
func (s *Sim) Stop() error {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return nil
	}
	s.stopOnce.Do(func() { close(s.stopc) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Restart simulates "ernicctl hot-reload" of instance id: a new server
// process (new pid, counters from zero), the VM still attached.
func (s *Sim) Restart(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.stopServer(id)
	if err != nil {
		return err
	}
	s.spawn(in)
	in.gen++
	in.eng = newEngine(s.o.Seed, id, in.gen, s.o.QPs, s.secs)
	in.writes = 0
	in.conn = connNotSet
	werr := s.write(in, in.conn)
	return errors.Join(werr, s.writeManifest())
}

// Remove simulates "rocm-ernic-launcher --remove-instance"; the .stats file
// stays, as with the launcher.
func (s *Sim) Remove(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.stopServer(id)
	if err != nil {
		return err
	}
	s.insts = slices.DeleteFunc(s.insts, func(x *inst) bool { return x == in })
	return s.writeManifest()
}

// stopServer makes instance id's server do its shutdown write and kills
// it; s.mu held.
func (s *Sim) stopServer(id int) (*inst, error) {
	in, err := s.find(id)
	if err != nil {
		return nil, err
	}
	_ = s.write(in, in.conn)
	in.child.kill()
	return in, nil
}

// Snapshot returns a copy of the last Stats completely written for instance
// id (also after Remove), and false when none was written.
func (s *Sim) Snapshot(id int) (Stats, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.last[id]
	if !ok {
		return Stats{}, false
	}
	return cloneStats(st), true
}

// Instances returns a copy of the current manifest entries, by id.
func (s *Sim) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Instance, 0, len(s.insts))
	for _, in := range s.insts {
		e := in.Instance
		if e.VM != nil {
			vm := *e.VM
			e.VM = &vm
		}
		out = append(out, e)
	}
	return out
}

func (s *Sim) find(id int) (*inst, error) {
	if !s.started || s.stopped {
		return nil, errors.New("sim: not running")
	}
	for _, in := range s.insts {
		if in.ID == id {
			return in, nil
		}
	}
	return nil, fmt.Errorf("sim: no instance %d", id)
}

func (s *Sim) logf(format string, args ...any) {
	if s.o.Log != nil {
		fmt.Fprintf(s.o.Log, format+"\n", args...)
	}
}

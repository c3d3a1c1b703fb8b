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
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

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

// HoldIfChild makes this binary able to be a simulated server child. When
// it is one (first argument HoldArg and HoldEnv=1) it calls Hold and exits
// the process; otherwise it returns at once. Call it first thing in main,
// or in the TestMain of a test package that runs the simulator
// (helper-process pattern): a test binary that merely links this package,
// or runs with HoldEnv set in its environment, runs its tests as usual.
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

// Options configures a simulation.
type Options struct {
	// RunDir is the simulated ERNIC_RUN_DIR; created (0755) if missing, never
	// removed. Required.
	RunDir string
	// Instances is the number of server instances: id 1 is the manager (no
	// VM, so its stats file is only written at startup and shutdown), ids
	// 2..N are workers with an attached VM. Default (0) 3.
	Instances int
	// QPs is the number of QPs each attached instance ends up with; they
	// appear over the first four ticks. Default (0) 8; negative means none.
	QPs int
	// Interval is the time between two stats writes of an attached
	// instance; per-tick traffic is scaled to it. Default (0) 1s.
	Interval time.Duration
	// LIF prints the "LIF Statistics:" block (74 counters) in every write.
	LIF bool
	// Seed makes counter values, QP handles and reset choices reproducible
	// (everything but timing, pids and launched_at).
	Seed int64
	// Writes, when positive, stops the rewriting after that many ticks:
	// the files stay as the last tick wrote them and the server processes
	// live on (a static run directory, for benchmarks). Default (0) never.
	Writes int
	// Log, when set, receives one line "wrote <path> write_count=<N>" per
	// completed stats write (N is the Write count printed in that file), and
	// lines starting with "error " for failures. Writes to it are serialised.
	Log io.Writer
}

// Run runs a simulation until ctx is done: New, Start, wait for ctx, then
// Stop (one last shutdown write per instance, children killed). It returns
// nil after a normal shutdown. The run directory is left in place.
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

// inst is one simulated server instance.
type inst struct {
	Instance        // manifest entry
	backend  string // "backend" value of the stats file
	child    *child // nil when spawning failed (pid is then our own)
	eng      *engine
	gen      int    // restarts so far, part of the engine's seed
	writes   uint64 // completed stats writes of the current process
	conn     string // connection state outside of one-off events
	hold     *hold  // events.go: ticks leave this process's file alone
}

// New validates o, applies the defaults and returns a simulation that has not
// touched the file system yet.
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

// Start creates the run directory, starts one server child per instance,
// writes instances.json, then each instance's startup stats file (all zeros,
// "connection : (not set)", "Write count : 0"), and begins ticking in a
// goroutine: every Interval each attached instance's stats file is rewritten
// in place. When ctx is done the goroutine shuts the simulation down as Stop
// does. Start can be called once.
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
		in := &inst{
			Instance: Instance{
				ID:     id,
				Role:   "worker",
				MAC:    fmt.Sprintf("02:aa:00:00:00:%02x", id&0xff),
				Socket: filepath.Join(s.o.RunDir, fmt.Sprintf("%d.sock", id)),
			},
			backend: "tcp:worker:127.0.0.1:6320",
			conn:    connNotSet,
		}
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

// newVM returns the attached VM of worker id: vm_name "train-a", "train-b",
// ...; vm_pid our own pid (the simulator stands in for the VM launcher, so it
// is live); gpu "0000:c1:00.0", "0000:c2:00.0", ... on even ids, "" on odd.
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

// tick advances and rewrites every attached instance. Every resetEvery ticks
// one attached worker (chosen with the seeded generator) gets a device reset:
// reset_count+1 and "connected (device reset)" for this one write.
// It returns the number of ticks so far.
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

// shutdown does the shutdown write of every instance and kills the children.
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

// Stop ends the simulation: one shutdown write per instance (Write count +1,
// no counter change), children killed and reaped. It waits for the ticking
// goroutine and returns the shutdown's write errors, if any. Stop is
// idempotent and also returns nil when Start was never called.
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

// Restart simulates "ernicctl hot-reload" of instance id: the old server does
// its shutdown write and its child is killed; a new child (new pid) starts
// with counters from zero and writes its startup file ("Write count : 0",
// "connection : (not set)", no QPs); then the manifest is rewritten with the
// new pid. The VM stays attached, so the next tick writes "Write count : 1"
// and QPs reappear over the following ticks.
func (s *Sim) Restart(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.find(id)
	if err != nil {
		return err
	}
	_ = s.write(in, in.conn)
	in.child.kill()
	s.spawn(in)
	in.gen++
	in.eng = newEngine(s.o.Seed, id, in.gen, s.o.QPs, s.secs)
	in.writes = 0
	in.conn = connNotSet
	werr := s.write(in, in.conn)
	return errors.Join(werr, s.writeManifest())
}

// Remove simulates "rocm-ernic-launcher --remove-instance": the server does
// its shutdown write and its child is killed, and the instance is dropped
// from the manifest. Its .stats file is left in place, like the launcher.
func (s *Sim) Remove(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.find(id)
	if err != nil {
		return err
	}
	_ = s.write(in, in.conn)
	in.child.kill()
	s.insts = slices.DeleteFunc(s.insts, func(x *inst) bool { return x == in })
	return s.writeManifest()
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

func cloneStats(st Stats) Stats {
	st.QPs = slices.Clone(st.QPs)
	for i := range st.QPs {
		st.QPs[i].Opcodes = slices.Clone(st.QPs[i].Opcodes)
	}
	st.LIF = slices.Clone(st.LIF)
	return st
}

// write renders in's current counters with the given connection state and
// rewrites its stats file in place. Called with s.mu held.
func (s *Sim) write(in *inst, conn string) error {
	st := in.eng.stats(in.writes, s.o.LIF)
	st.Socket = in.Socket
	st.Backend = in.backend
	st.PCI = "0x1dd8:0x100a"
	st.MAC = in.MAC
	st.Connection = conn
	st.WriteCount = in.writes
	path := filepath.Join(s.o.RunDir, fmt.Sprintf("%d.stats", in.ID))
	if err := WriteStatsInPlace(path, &st); err != nil {
		s.logf("error writing %s: %v", path, err)
		return err
	}
	in.writes++
	s.last[in.ID] = st
	s.logf("wrote %s write_count=%d", path, st.WriteCount)
	if s.wrote != nil {
		s.wrote(in, &st)
	}
	return nil
}

func (s *Sim) writeManifest() error {
	list := make([]Instance, 0, len(s.insts))
	for _, in := range s.insts {
		list = append(list, in.Instance)
	}
	err := WriteManifestInPlace(filepath.Join(s.o.RunDir, "instances.json"), list)
	if err != nil {
		s.logf("error writing manifest: %v", err)
	}
	return err
}

func (s *Sim) logf(format string, args ...any) {
	if s.o.Log != nil {
		fmt.Fprintf(s.o.Log, format+"\n", args...)
	}
}

// child is one simulated server process.
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

func startChild() (*child, error) {
	if !canHold.Load() {
		return nil, errors.New("this binary does not call sim.HoldIfChild in its main or TestMain")
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
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

// ---------------------------------------------------------------------------
// Counter engine: one per server process, deterministic for (seed, id, gen).

// Opcode indexes into OpcodeNames.
const (
	opRDMAWrite    = 0
	opRDMAWriteImm = 1
	opSend         = 2
	opSendImm      = 3
	opRDMARead     = 4
	opAtomicCAS    = 5
	opAtomicFAA    = 6
)

// QP traffic profiles.
const (
	profWriter = iota // RDMA_WRITE bulk plus small SEND notifications
	profReader        // RDMA_READ only
	profSender        // SEND / SEND_WITH_IMM both ways
	profMixed         // RDMA_WRITE_WITH_IMM, RDMA_READ, atomics
	numProfiles
)

// roceOverhead is the per-packet IP+UDP+BTH+ICRC(+RETH) overhead in bytes.
const roceOverhead = 58

// mtu is the RoCE path MTU in bytes.
const mtu = 4096

var lifIndex = func() map[string]int {
	m := make(map[string]int, len(LIFNames))
	for i, n := range LIFNames {
		m[n] = i
	}
	return m
}()

// lifErrorNames are the RDMA error counters that move now and then.
var lifErrorNames = [...]string{
	"rdma_req_rx_pkt_seq_err",
	"rdma_req_rx_rnr_retry_err",
	"rdma_req_rx_implied_nak_seq_err",
	"rdma_resp_rx_dup_requests",
	"rdma_resp_rx_out_of_seq_pkts",
	"rdma_resp_rx_out_of_buffer",
}

type qpSim struct {
	handle     uint32
	profile    int
	size       uint64  // payload bytes per data WQE
	rate       float64 // data WQEs per second when busy
	batch      uint64  // WQEs per doorbell
	busy       float64 // probability of traffic on a tick
	otherProne bool    // gets WQEs with opcodes outside the 18 names

	dbSend, dbRecv, wqes, cqes uint64
	sent, recv, rread, rwrite  uint64
	ops                        [len(OpcodeNames)]uint64
	other                      uint64
}

// qpDelta is what one QP did during one tick.
type qpDelta struct {
	doorbells, cqes              uint64
	sent, recv, rread, rwrite    uint64
	txPay, rxPay, txPkts, rxPkts uint64
}

type engine struct {
	rng     *rand.Rand
	secs    float64
	target  int
	steps   uint64
	handles []uint32 // unused QP handles, in creation order
	dev     Device
	qps     []*qpSim // in hash order
	lif     [len(LIFNames)]uint64
}

func newEngine(seed int64, id, gen, target int, secs float64) *engine {
	e := &engine{
		rng:    rand.New(rand.NewPCG(uint64(seed), uint64(id)<<20|uint64(gen))),
		secs:   secs,
		target: target,
	}
	n := max(3*target, 8)
	for _, h := range e.rng.Perm(n) {
		e.handles = append(e.handles, uint32(h+2))
	}
	return e
}

// qpHash orders QPs like a hash table would: not sorted, stable per handle.
func qpHash(h uint32) uint32 { return h * 2654435761 }

func (e *engine) newQP() {
	h := e.handles[0]
	e.handles = e.handles[1:]
	r := e.rng
	q := &qpSim{
		handle:     h,
		profile:    r.IntN(numProfiles),
		size:       uint64(1) << (12 + r.IntN(9)), // 4 KiB .. 1 MiB
		rate:       50 + 450*r.Float64(),
		batch:      uint64(1 + r.IntN(4)),
		busy:       0.6 + 0.4*r.Float64(),
		otherProne: r.IntN(4) == 0,
	}
	i, _ := slices.BinarySearchFunc(e.qps, qpHash(h), func(x *qpSim, k uint32) int {
		return cmpU32(qpHash(x.handle), k)
	})
	e.qps = slices.Insert(e.qps, i, q)
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (e *engine) addLIF(name string, v uint64) {
	i, ok := lifIndex[name]
	if !ok {
		panic("sim: unknown LIF counter " + name)
	}
	e.lif[i] += v
}

// step advances all counters by one tick; every counter only grows.
func (e *engine) step(reset bool) {
	r := e.rng
	e.steps++
	var cmds uint64
	if e.steps == 1 {
		cmds += 12 // device bring-up: identify, init, PD, CQs, MRs...
	}
	add := (e.target + 3) / 4
	for i := 0; i < add && len(e.qps) < e.target; i++ {
		e.newQP()
		cmds += 3 // create_qp + two modify_qp
	}
	if r.IntN(10) == 0 {
		cmds++
	}

	var t qpDelta
	for _, q := range e.qps {
		d := q.step(r, e.secs)
		t.doorbells += d.doorbells
		t.cqes += d.cqes
		t.sent += d.sent
		t.recv += d.recv
		t.rread += d.rread
		t.rwrite += d.rwrite
		t.txPay += d.txPay
		t.rxPay += d.rxPay
		t.txPkts += d.txPkts
		t.rxPkts += d.rxPkts
	}

	dv := &e.dev
	intr := (t.cqes + 15) / 16
	if cmds > 0 {
		intr++ // admin queue completion
	}
	if reset {
		dv.ResetCount++
		cmds += 4
		dv.Bar0Writes += 16
		dv.Bar0Reads += 8
	}
	dv.Commands += cmds
	dv.Interrupts += intr
	dv.UARWrites += t.doorbells + intr // doorbells + CQ re-arms
	dv.Bar0Reads += 4 + r.Uint64N(8) + 2*cmds
	dv.Bar0Writes += 3*cmds + intr
	if r.IntN(20) == 0 {
		dv.UARReads++
	}
	dv.BytesSent += t.sent
	dv.BytesReceived += t.recv
	dv.BytesRDMARead += t.rread
	dv.BytesRDMAWrite += t.rwrite
	ipTx := t.txPay + t.txPkts*roceOverhead
	ipRx := t.rxPay + t.rxPkts*roceOverhead
	dv.IPBytesTx += ipTx
	dv.IPBytesRx += ipRx

	// LIF: RoCE traffic plus a little plain Ethernet (ssh, ARP, mDNS).
	e.addLIF("tx_rdma_ucast_bytes", ipTx)
	e.addLIF("tx_rdma_ucast_packets", t.txPkts)
	e.addLIF("rx_rdma_ucast_bytes", ipRx)
	e.addLIF("rx_rdma_ucast_packets", t.rxPkts)
	ethTxPkts := uint64(1 + r.IntN(5))
	ethRxPkts := uint64(1 + r.IntN(5))
	e.addLIF("tx_ucast_packets", t.txPkts+ethTxPkts)
	e.addLIF("tx_ucast_bytes", ipTx+14*t.txPkts+ethTxPkts*uint64(60+r.IntN(1400)))
	e.addLIF("rx_ucast_packets", t.rxPkts+ethRxPkts)
	e.addLIF("rx_ucast_bytes", ipRx+14*t.rxPkts+ethRxPkts*uint64(60+r.IntN(1400)))
	if r.IntN(5) == 0 {
		e.addLIF("rx_bcast_packets", 1)
		e.addLIF("rx_bcast_bytes", 60)
	}
	if r.IntN(10) == 0 {
		e.addLIF("rx_mcast_packets", 1)
		e.addLIF("rx_mcast_bytes", 90)
	}
	if r.IntN(20) == 0 {
		e.addLIF("tx_mcast_packets", 1)
		e.addLIF("tx_mcast_bytes", 90)
	}
	if r.IntN(10) == 0 {
		n := uint64(1 + r.IntN(5))
		e.addLIF("rx_rdma_ecn_packets", n)
		e.addLIF("tx_rdma_cnp_packets", n)
	}
	if r.IntN(10) == 0 {
		e.addLIF("rx_rdma_cnp_packets", uint64(1+r.IntN(3)))
	}
	if r.IntN(20) == 0 {
		e.addLIF(lifErrorNames[r.IntN(len(lifErrorNames))], uint64(1+r.IntN(2)))
	}
}

func (q *qpSim) step(r *rand.Rand, secs float64) qpDelta {
	var d qpDelta
	if r.Float64() >= q.busy {
		return d
	}
	n := uint64(q.rate*secs*(0.5+r.Float64())) + 1
	var sq [len(OpcodeNames)]uint64
	var recvs, responses uint64
	switch q.profile {
	case profWriter:
		sq[opRDMAWrite] = n
		sq[opSend] = n/8 + 1
		d.rwrite = n * q.size
		d.sent = sq[opSend] * 64
		recvs = sq[opSend]
		d.recv = recvs * 64
	case profReader:
		sq[opRDMARead] = n
		d.rread = n * q.size
		responses = n
	case profSender:
		sq[opSend] = n
		sq[opSendImm] = n / 4
		d.sent = (sq[opSend] + sq[opSendImm]) * q.size
		recvs = n
		d.recv = n * q.size
	case profMixed:
		sq[opRDMAWriteImm] = n/2 + 1
		sq[opRDMARead] = n / 4
		if r.IntN(3) == 0 {
			sq[opAtomicFAA] = 1 + r.Uint64N(4)
		}
		if r.IntN(5) == 0 {
			sq[opAtomicCAS] = 1 + r.Uint64N(2)
		}
		d.rwrite = sq[opRDMAWriteImm] * q.size
		d.rread = sq[opRDMARead]*q.size + (sq[opAtomicFAA]+sq[opAtomicCAS])*8
		recvs = sq[opRDMAWriteImm]
		responses = sq[opRDMARead] + sq[opAtomicFAA] + sq[opAtomicCAS]
	}
	var other uint64
	if q.otherProne && r.IntN(3) == 0 {
		other = 1 + r.Uint64N(3)
	}
	var sqOps uint64
	for i, v := range sq {
		q.ops[i] += v
		sqOps += v
	}
	q.other += other
	q.wqes += sqOps + other
	dbSend := (sqOps + other + q.batch - 1) / q.batch
	dbRecv := (recvs + q.batch - 1) / q.batch
	q.dbSend += dbSend
	q.dbRecv += dbRecv
	d.doorbells = dbSend + dbRecv
	// A few completions may still be pending at the time of the write.
	if cq := q.wqes - min(r.Uint64N(4), q.wqes); cq > q.cqes {
		d.cqes = cq - q.cqes
		q.cqes = cq
	}
	q.sent += d.sent
	q.recv += d.recv
	q.rread += d.rread
	q.rwrite += d.rwrite
	d.txPay = d.sent + d.rwrite
	d.rxPay = d.recv + d.rread
	d.txPkts = d.txPay/mtu + sqOps + other
	d.rxPkts = d.rxPay/mtu + recvs + responses + (sqOps+3)/4 // + ACKs
	return d
}

// stats renders the engine's counters. QPs are printed in hash order rotated
// by rot, so the order is not stable between writes (like the server's).
func (e *engine) stats(rot uint64, lif bool) Stats {
	var st Stats
	st.Device = e.dev
	n := len(e.qps)
	for i := range n {
		q := e.qps[(uint64(i)+rot)%uint64(n)]
		qp := QP{
			Handle:         q.handle,
			DoorbellSend:   q.dbSend,
			DoorbellRecv:   q.dbRecv,
			WQEsProcessed:  q.wqes,
			CQEsPosted:     q.cqes,
			BytesSent:      q.sent,
			BytesReceived:  q.recv,
			BytesRDMARead:  q.rread,
			BytesRDMAWrite: q.rwrite,
			Other:          q.other > 0,
		}
		for j, v := range q.ops {
			if v > 0 {
				qp.Opcodes = append(qp.Opcodes, Counter{Name: OpcodeNames[j], Value: v})
			}
		}
		st.QPs = append(st.QPs, qp)
	}
	if lif {
		st.LIF = make([]Counter, len(LIFNames))
		for i, name := range LIFNames {
			st.LIF[i] = Counter{Name: name, Value: e.lif[i]}
		}
	}
	return st
}

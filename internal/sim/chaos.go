// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Chaos mode: a Chaos runner injects, into a running Sim, every fault a
// reader of the run directory can meet, and logs each one, each real restart
// and every complete stats write (with its values) as JSON lines, so that a
// test can compare what a collector published with what was really written.
//
// Faults (the kind names of the log):
//
//   - torn-empty, torn-line, torn-qp, torn-qp-boundary, torn-buffer: a stats
//     write that stops mid-file for 50-500 ms and then completes: the file
//     is empty, cut inside a line (inside a number when the line has one),
//     cut at a line boundary inside a QP block, cut right after a QP block
//     (complete in form, fewer QP blocks and no LIF block), or cut at a
//     multiple of the 4 KiB stdio buffer. Only the completed write is logged
//     as a write.
//   - manifest-race: two writers truncate and rewrite instances.json at the
//     same time, in small chunks (one indented, one compact), so the result
//     is often not JSON; the launcher rewrites it whole after the hold.
//   - manifest-torn: instances.json written up to a random cut, then, after
//     50-500 ms, completed.
//   - crash: the server process is killed (no shutdown write); its pid stays
//     in the manifest and its stats file stays. After the hold a new server
//     starts (a real restart).
//   - pid-reuse: a crash, then an unrelated process takes the dead server's
//     pid while the manifest keeps it and the stats file stays. As root the
//     very pid is reused (/proc/sys/kernel/ns_last_pid); otherwise, or when
//     the pid cannot be had, the manifest entry is pointed at a fresh
//     unrelated process instead. The detail of the log line says which.
//     After the hold a new server starts (a real restart).
//   - run-dir-recreate: the run directory is removed and, half a hold (1-2 s)
//     later, created again with the manifest and every instance's stats file (the
//     same server processes: counters continue).
//   - unreadable-dir: the stats file is replaced by a directory for the hold.
//   - unreadable-chmod: the stats file is made mode 000 for the hold. Root
//     ignores file permissions, so as root this kind is logged as skipped
//     ("skip") and unreadable-dir stands for it.
//   - symlink-outside: the stats file is replaced by a symbolic link to a
//     complete stats file outside the run directory (alternately an absolute
//     and a relative "../" link) whose counters are the real ones plus 10^12,
//     values no complete write ever had.
//   - oversized: the stats file is replaced by a complete one, with the same
//     bogus values, padded to more than MaxFileBytes.
//   - garbage: the stats file is replaced by random binary bytes.
//   - huge-instance: an instance with HugeQPs (10 000) QPs is added to the
//     manifest (once, first).
//   - qp-reuse: a QP's counters drop to zero while its handle stays (the QP
//     was destroyed and its handle reused); its epoch in the write log goes
//     up. Besides, every real restart of Chaos reuses the old process's QP
//     handles, so a handle comes back with counters from zero.
//   - near-2^64: LIF counters rdma_req_rx_cqe_err = 2^64-12346, rx_dma_error
//     = 2^63 (both beyond int64) and tx_dma_error = 2^63-1 (the largest
//     int64), and bytes_rdma_read = 2^64-4097 of a QP that never reads.
//   - wrap-other: a QP's opcode lines sum to more than wqes_processed, so its
//     "(other opcodes)" line wraps to 2^64-5.
//
// After each lasting fault (a hold of HoldMin..HoldMax) the state is put
// back: the fault file is removed and the server writes its file whole at
// once. Real restarts (a new server process, counters from zero: hot-reload,
// and the recoveries of crash and pid-reuse) are logged as "restart" records,
// not faults.
//
// Chaos needs Options.LIF for near-2^64; the manager (instance 1, whose file
// is only written at startup and shutdown) gets no fault of its own.

// Chaos event kinds that are not torn writes.
const (
	ChaosManifestRace   = "manifest-race"
	ChaosManifestTorn   = "manifest-torn"
	ChaosCrash          = "crash"
	ChaosPIDReuse       = "pid-reuse"
	ChaosRunDirRecreate = "run-dir-recreate"
	ChaosUnreadableDir  = "unreadable-dir"
	ChaosUnreadableMode = "unreadable-chmod"
	ChaosSymlink        = "symlink-outside"
	ChaosOversized      = "oversized"
	ChaosGarbage        = "garbage"
	ChaosHugeInstance   = "huge-instance"
	ChaosQPReuse        = "qp-reuse"
	ChaosNear2p64       = "near-2^64"
	ChaosWrapOther      = "wrap-other"
	// ChaosRestart is a hot-reload: a real restart, logged as "restart",
	// scheduled like the faults.
	ChaosRestart = "restart"
)

// Torn-write kinds.
const (
	ChaosTornEmpty       = "torn-empty"
	ChaosTornLine        = "torn-line"
	ChaosTornQP          = "torn-qp"
	ChaosTornQPBoundary  = "torn-qp-boundary"
	ChaosTornBuffer      = "torn-buffer"
	chaosRestartCrash    = "crash-recovery"
	chaosRestartPIDReuse = "pid-reuse-recovery"
	chaosRestartHot      = "hot-reload"
)

// ChaosTornKinds are the torn-write kinds, in the order the torn writer
// cycles through them.
var ChaosTornKinds = []string{ChaosTornEmpty, ChaosTornLine, ChaosTornQP, ChaosTornQPBoundary, ChaosTornBuffer}

// ChaosKinds are the scheduled kinds (all but the torn writes), in the order
// of the documentation above. huge-instance runs once, first.
var ChaosKinds = []string{
	ChaosManifestRace, ChaosManifestTorn, ChaosCrash, ChaosPIDReuse, ChaosRunDirRecreate,
	ChaosUnreadableDir, ChaosUnreadableMode, ChaosSymlink, ChaosOversized, ChaosGarbage,
	ChaosHugeInstance, ChaosQPReuse, ChaosNear2p64, ChaosWrapOther, ChaosRestart,
}

// ChaosSampleQPBelow: the write log carries the QPs whose handle is below
// it (all QPs of an instance with the default 8 QPs, about ten of a
// 10 000-QP instance). Faults aimed at one QP pick one of these.
const ChaosSampleQPBelow = 32

// ChaosSampleLIF are the LIF counters the write log carries: the ones the
// simulator moves most and the ones near-2^64 sets.
var ChaosSampleLIF = []string{
	"tx_rdma_ucast_bytes", "rx_rdma_ucast_bytes", "tx_ucast_packets", "rx_ucast_bytes",
	"rx_bcast_packets", "rx_rdma_ecn_packets",
	"rdma_req_rx_cqe_err", "rx_dma_error", "tx_dma_error",
}

// Values near-2^64 sets.
const (
	ChaosNearMaxLIF   = "rdma_req_rx_cqe_err" // 2^64-12346
	ChaosAboveI64LIF  = "rx_dma_error"        // 2^63
	ChaosMaxI64LIF    = "tx_dma_error"        // 2^63-1
	chaosNearMaxValue = math.MaxUint64 - 12345
)

// chaosBogus is added to every counter of the files that must never be
// published (symlink target, oversized file).
const chaosBogus = 1_000_000_000_000

// ChaosOptions configures a Chaos runner. Zero values take the defaults.
type ChaosOptions struct {
	// Events receives the JSON-lines log (one ChaosRecord per line). Writes
	// to it are serialised. May be nil.
	Events io.Writer
	// Every is the time between two scheduled events (default 3s).
	Every time.Duration
	// TornEvery is the time between two torn stats writes (default 1s;
	// negative: none).
	TornEvery time.Duration
	// HoldMin and HoldMax bound how long a lasting fault lasts (default
	// 2s..4s).
	HoldMin, HoldMax time.Duration
	// RestartGap is the least time between two restarts of one instance,
	// and between its creation and its first restart (default 10s), so
	// that every process is seen by a collector scraping every second.
	RestartGap time.Duration
	// MaxFileBytes is the collector's max_file_bytes: the oversized file is
	// 4 KiB larger (default 64 MiB, the receiver's default).
	MaxFileBytes int64
	// HugeQPs is the QP count of the huge-instance (default 10000; negative:
	// no huge instance).
	HugeQPs int
	// Kinds, when not empty, are the scheduled kinds (from ChaosKinds);
	// default all of them.
	Kinds []string
	// Seed makes the choices reproducible (not the timing).
	Seed int64
}

// ChaosRecord is one line of the JSON log. Event is "write" (a complete
// stats write), "fault" (an injected fault), "fault-end" (a lasting fault
// undone), "restart" (a real restart: Kind is hot-reload, crash-recovery or
// pid-reuse-recovery) or "skip" (a kind that cannot be injected here).
type ChaosRecord struct {
	Time   time.Time `json:"t"`
	Event  string    `json:"ev"`
	Kind   string    `json:"kind,omitempty"`
	ID     int       `json:"id,omitempty"`
	PID    int       `json:"pid,omitempty"`
	OldPID int       `json:"old_pid,omitempty"`
	// Gen is the instance's server generation: 0 for its first process, +1
	// at every real restart.
	Gen    int    `json:"gen"`
	Detail string `json:"detail,omitempty"`
	// QP is the handle a qp-reuse or wrap-other fault changed.
	QP uint32 `json:"qp,omitempty"`

	// Of a write:
	WriteCount uint64             `json:"write_count"`
	Connection string             `json:"conn,omitempty"`
	QPCount    int                `json:"qp_count"`
	Device     map[string]uint64  `json:"device,omitempty"` // the 15 keys as printed
	QPs        map[uint32]ChaosQP `json:"qps,omitempty"`    // handles below ChaosSampleQPBelow
	LIF        map[string]uint64  `json:"lif,omitempty"`    // ChaosSampleLIF
}

// ChaosQP is one QP of a write record.
type ChaosQP struct {
	// Epoch counts the qp-reuse drops of this handle in this process.
	Epoch    int               `json:"epoch"`
	Counters map[string]uint64 `json:"counters"` // the eight QP keys
	// Opcodes are the printed opcode lines; "other" is the (other opcodes)
	// line as printed (wrapped near 2^64 when the sum is larger).
	Opcodes map[string]uint64 `json:"opcodes,omitempty"`
}

// ChaosCounts sums up a chaos run.
type ChaosCounts struct {
	Faults   map[string]int // by kind
	Skipped  map[string]int // by kind
	Restarts map[int]int    // real restarts by instance id
	Writes   int            // complete stats writes logged
}

// Chaos injects faults into a running Sim (see the comment above).
type Chaos struct {
	s       *Sim
	o       ChaosOptions
	outside string // a directory outside the run directory (symlink targets)
	root    bool   // euid 0: chmod does not make a file unreadable

	rngMu sync.Mutex
	rng   *rand.Rand

	// global is held shared by instance faults and torn writes, and
	// exclusively by the manifest and run-directory faults.
	global sync.RWMutex

	// Guarded by s.mu:
	busy        map[int]string // instance id -> the fault it is in
	lastRestart map[int]time.Time
	epochs      map[int]map[uint32]int
	decoys      map[int]*child // pid-reuse: the unrelated process
	counts      ChaosCounts
	started     bool

	evMu sync.Mutex

	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// NewChaos returns a Chaos runner for s, which must be New'd and may be
// started already. It hooks s's stats writes at once: from now on every
// complete write is logged.
func NewChaos(s *Sim, o ChaosOptions) (*Chaos, error) {
	if o.Every <= 0 {
		o.Every = 3 * time.Second
	}
	if o.TornEvery == 0 {
		o.TornEvery = time.Second
	}
	if o.HoldMin <= 0 {
		o.HoldMin = 2 * time.Second
	}
	if o.HoldMax < o.HoldMin {
		o.HoldMax = max(o.HoldMin, 4*time.Second)
	}
	if o.RestartGap <= 0 {
		o.RestartGap = 10 * time.Second
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 64 << 20
	}
	if o.HugeQPs == 0 {
		o.HugeQPs = 10000
	}
	if len(o.Kinds) == 0 {
		o.Kinds = ChaosKinds
	}
	for _, k := range o.Kinds {
		if !slices.Contains(ChaosKinds, k) {
			return nil, fmt.Errorf("sim: unknown chaos kind %q", k)
		}
	}
	outside, err := os.MkdirTemp("", "ernic-chaos-outside-")
	if err != nil {
		return nil, err
	}
	c := &Chaos{
		s:           s,
		o:           o,
		outside:     outside,
		root:        os.Geteuid() == 0,
		rng:         rand.New(rand.NewPCG(uint64(o.Seed), 0xc4a05)),
		busy:        map[int]string{},
		lastRestart: map[int]time.Time{},
		epochs:      map[int]map[uint32]int{},
		decoys:      map[int]*child{},
		counts:      ChaosCounts{Faults: map[string]int{}, Skipped: map[string]int{}, Restarts: map[int]int{}},
	}
	s.mu.Lock()
	s.wrote = c.logWrite
	s.mu.Unlock()
	return c, nil
}

// Start begins injecting until ctx is done or Stop is called. The Sim must
// be running.
func (c *Chaos) Start(ctx context.Context) error {
	s := c.s
	s.mu.Lock()
	if !s.started || s.stopped {
		s.mu.Unlock()
		return errors.New("sim: chaos needs a running simulation")
	}
	if c.started {
		s.mu.Unlock()
		return errors.New("sim: chaos already started")
	}
	c.started = true
	now := time.Now()
	for _, in := range s.insts {
		c.lastRestart[in.ID] = now
	}
	s.mu.Unlock()
	ctx, c.cancel = context.WithCancel(ctx)
	c.wg.Add(1)
	go c.schedule(ctx)
	if c.o.TornEvery > 0 {
		c.wg.Add(1)
		go c.tornLoop(ctx)
	}
	return nil
}

// Stop stops injecting, waits until every fault in progress is undone (a
// crashed server is replaced by a new one: a real restart) and returns.
// Call it before the Sim's Stop. Idempotent.
func (c *Chaos) Stop() error {
	c.stopOnce.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		c.wg.Wait()
		s := c.s
		s.mu.Lock()
		for id, d := range c.decoys {
			d.kill()
			delete(c.decoys, id)
		}
		s.mu.Unlock()
		_ = os.RemoveAll(c.outside)
	})
	return nil
}

// Counts returns what was injected so far.
func (c *Chaos) Counts() ChaosCounts {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	out := ChaosCounts{Faults: map[string]int{}, Skipped: map[string]int{}, Restarts: map[int]int{}, Writes: c.counts.Writes}
	for k, v := range c.counts.Faults {
		out.Faults[k] = v
	}
	for k, v := range c.counts.Skipped {
		out.Skipped[k] = v
	}
	for k, v := range c.counts.Restarts {
		out.Restarts[k] = v
	}
	return out
}

// ---------------------------------------------------------------------------
// Logging.

func (c *Chaos) emit(r ChaosRecord) {
	if c.o.Events == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	b = append(b, '\n')
	c.evMu.Lock()
	defer c.evMu.Unlock()
	_, _ = c.o.Events.Write(b)
}

// fault logs an injected fault (JSON record and a text line on the Sim's
// Log) and counts it. Called with s.mu held.
func (c *Chaos) fault(kind string, in *inst, format string, args ...any) {
	c.faultQP(kind, in, 0, format, args...)
}

// faultQP is fault for a fault aimed at QP handle qp.
func (c *Chaos) faultQP(kind string, in *inst, qp uint32, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	r := ChaosRecord{Event: "fault", Kind: kind, Detail: detail, QP: qp}
	if in != nil {
		r.ID, r.PID, r.Gen = in.ID, in.PID, in.gen
	}
	c.counts.Faults[kind]++
	c.emit(r)
	c.s.logf("fault %s id=%d %s", kind, r.ID, detail)
}

// faultEnd logs the end of a lasting fault. Called with s.mu held.
func (c *Chaos) faultEnd(kind string, in *inst) {
	r := ChaosRecord{Event: "fault-end", Kind: kind}
	if in != nil {
		r.ID, r.PID, r.Gen = in.ID, in.PID, in.gen
	}
	c.emit(r)
}

// logWrite is the Sim's write hook: one "write" record per complete stats
// write. Called with s.mu held.
func (c *Chaos) logWrite(in *inst, st *Stats) { c.logWriteAt(in, st, time.Now()) }

// logWriteAt logs a complete write that completed at at. Called with s.mu
// held.
func (c *Chaos) logWriteAt(in *inst, st *Stats, at time.Time) {
	c.counts.Writes++
	if c.o.Events == nil {
		return
	}
	r := ChaosRecord{
		Time: at, Event: "write", ID: in.ID, PID: in.PID, Gen: in.gen,
		WriteCount: st.WriteCount, Connection: st.Connection, QPCount: len(st.QPs),
	}
	d := &st.Device
	r.Device = map[string]uint64{
		"commands": d.Commands, "bar0_reads": d.Bar0Reads, "bar0_writes": d.Bar0Writes,
		"uar_reads": d.UARReads, "uar_writes": d.UARWrites,
		"mmio_reads_total": d.Bar0Reads + d.UARReads, "mmio_writes_total": d.Bar0Writes + d.UARWrites,
		"interrupts": d.Interrupts, "reset_count": d.ResetCount,
		"total_bytes_sent": d.BytesSent, "total_bytes_received": d.BytesReceived,
		"total_bytes_rdma_read": d.BytesRDMARead, "total_bytes_rdma_write": d.BytesRDMAWrite,
		"total_ip_bytes_tx": d.IPBytesTx, "total_ip_bytes_rx": d.IPBytesRx,
	}
	for i := range st.QPs {
		q := &st.QPs[i]
		if q.Handle >= ChaosSampleQPBelow {
			continue
		}
		if r.QPs == nil {
			r.QPs = map[uint32]ChaosQP{}
		}
		cq := ChaosQP{
			Epoch: c.epochs[in.ID][q.Handle],
			Counters: map[string]uint64{
				"doorbell_send": q.DoorbellSend, "doorbell_recv": q.DoorbellRecv,
				"wqes_processed": q.WQEsProcessed, "cqes_posted": q.CQEsPosted,
				"bytes_sent": q.BytesSent, "bytes_received": q.BytesReceived,
				"bytes_rdma_read": q.BytesRDMARead, "bytes_rdma_write": q.BytesRDMAWrite,
			},
		}
		var sum uint64
		for _, op := range q.Opcodes {
			sum += op.Value
			if op.Value > 0 {
				if cq.Opcodes == nil {
					cq.Opcodes = map[string]uint64{}
				}
				cq.Opcodes[op.Name] = op.Value
			}
		}
		if q.Other {
			if cq.Opcodes == nil {
				cq.Opcodes = map[string]uint64{}
			}
			cq.Opcodes["other"] = q.WQEsProcessed - sum // wraps like the file
		}
		r.QPs[q.Handle] = cq
	}
	if len(st.LIF) > 0 {
		r.LIF = map[string]uint64{}
		for _, l := range st.LIF {
			if slices.Contains(ChaosSampleLIF, l.Name) {
				r.LIF[l.Name] = l.Value
			}
		}
	}
	c.emit(r)
}

// ---------------------------------------------------------------------------
// Randomness.

func (c *Chaos) intn(n int) int {
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	return c.rng.IntN(n)
}

func (c *Chaos) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	return lo + time.Duration(c.rng.Int64N(int64(hi-lo)))
}

func (c *Chaos) hold() time.Duration { return c.between(c.o.HoldMin, c.o.HoldMax) }

// pause is how long a torn writer stops mid-file.
func (c *Chaos) pause() time.Duration {
	return c.between(50*time.Millisecond, 500*time.Millisecond)
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// ---------------------------------------------------------------------------
// Scheduling.

func (c *Chaos) cycle(first bool) []string {
	var ks []string
	for _, k := range c.o.Kinds {
		if k != ChaosHugeInstance {
			ks = append(ks, k)
		}
	}
	c.rngMu.Lock()
	c.rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
	c.rngMu.Unlock()
	if first && c.o.HugeQPs > 0 && slices.Contains(c.o.Kinds, ChaosHugeInstance) {
		ks = append([]string{ChaosHugeInstance}, ks...)
	}
	return ks
}

// schedule starts one event every Every on average (at random times, see
// tornLoop), round-robin over a shuffled cycle
// of the kinds. A kind that finds no instance to work on goes to the end of
// the cycle. Manifest and run-directory faults run here, exclusively (they
// wait for the instance faults in progress); instance faults run in their
// own goroutines, at most one per instance.
func (c *Chaos) schedule(ctx context.Context) {
	defer c.wg.Done()
	queue := c.cycle(true)
	for {
		sleepCtx(ctx, c.between(c.o.Every/2, c.o.Every*3/2))
		if ctx.Err() != nil {
			return
		}
		if len(queue) == 0 {
			queue = c.cycle(false)
		}
		kind := queue[0]
		if c.launch(ctx, kind) {
			queue = queue[1:]
		} else {
			queue = append(queue[1:], kind)
		}
	}
}

// launch starts one event of kind; false when nothing could be done now.
func (c *Chaos) launch(ctx context.Context, kind string) bool {
	switch kind {
	case ChaosManifestRace, ChaosManifestTorn, ChaosRunDirRecreate, ChaosHugeInstance:
		c.global.Lock()
		defer c.global.Unlock()
		switch kind {
		case ChaosManifestRace:
			return c.manifestRace(ctx)
		case ChaosManifestTorn:
			return c.manifestTorn(ctx)
		case ChaosRunDirRecreate:
			return c.runDirRecreate(ctx)
		default:
			return c.addHuge()
		}
	case ChaosUnreadableMode:
		if c.root {
			s := c.s
			s.mu.Lock()
			c.counts.Skipped[kind]++
			c.emit(ChaosRecord{Event: "skip", Kind: kind, Detail: "running as root, which ignores file permissions: unreadable-dir stands for it"})
			s.logf("fault %s skipped: root ignores file permissions", kind)
			s.mu.Unlock()
			return true
		}
	}
	restart := kind == ChaosCrash || kind == ChaosPIDReuse || kind == ChaosRestart
	in := c.pick(kind, restart, kind == ChaosNear2p64 || kind == ChaosWrapOther || kind == ChaosQPReuse)
	if in == nil {
		return false
	}
	c.global.RLock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.global.RUnlock()
		switch kind {
		case ChaosCrash, ChaosPIDReuse:
			c.crash(ctx, in, kind)
		case ChaosRestart:
			c.hotReload(in)
		case ChaosUnreadableDir, ChaosUnreadableMode, ChaosSymlink, ChaosOversized, ChaosGarbage:
			c.replaceFile(ctx, in, kind)
		case ChaosQPReuse, ChaosNear2p64, ChaosWrapOther:
			c.mutate(in, kind)
		}
	}()
	return true
}

// pick chooses and marks busy an attached worker that is in no fault and
// not held; restart: none restarted within RestartGap; qps: one with a
// sampled QP. nil when there is none.
func (c *Chaos) pick(kind string, restart, qps bool) *inst {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	now := time.Now()
	var cands []*inst
	for _, in := range s.insts {
		if in.ID == 1 || !in.attached() || in.held() || c.busy[in.ID] != "" {
			continue
		}
		if restart && now.Sub(c.lastRestart[in.ID]) < c.o.RestartGap {
			continue
		}
		if qps && len(c.sampledQPs(in)) == 0 {
			continue
		}
		cands = append(cands, in)
	}
	if len(cands) == 0 {
		return nil
	}
	in := cands[c.intn(len(cands))]
	c.busy[in.ID] = kind
	return in
}

// sampledQPs are in's QPs that the write log carries.
func (c *Chaos) sampledQPs(in *inst) []*qpSim {
	var out []*qpSim
	for _, q := range in.eng.qps {
		if q.handle < ChaosSampleQPBelow {
			out = append(out, q)
		}
	}
	return out
}

func (c *Chaos) statsPath(in *inst) string {
	return filepath.Join(c.s.o.RunDir, fmt.Sprintf("%d.stats", in.ID))
}

// ---------------------------------------------------------------------------
// Torn writes.

// tornLoop does a torn write every TornEvery on average, at random times:
// a fixed period would keep the same phase as the ticks and a reader's
// scrapes, so that a reader would never (or always) land in the pause.
func (c *Chaos) tornLoop(ctx context.Context) {
	defer c.wg.Done()
	for i := 0; ; {
		sleepCtx(ctx, c.between(c.o.TornEvery/2, c.o.TornEvery*3/2))
		if ctx.Err() != nil {
			return
		}
		kind := ChaosTornKinds[i%len(ChaosTornKinds)]
		in := c.pick(kind, false, false)
		if in == nil {
			continue
		}
		i++
		c.global.RLock()
		c.tornWrite(in, kind)
		c.global.RUnlock()
	}
}

// tornWrite is the server's next write of in (one tick of traffic), stopped
// after a prefix chosen by kind for a pause, then completed.
func (c *Chaos) tornWrite(in *inst, kind string) {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		delete(c.busy, in.ID)
		s.mu.Unlock()
		return
	}
	in.hold = &hold{pid: in.PID, reason: "chaos: " + kind}
	in.eng.step(false)
	in.conn = connConnected
	st := c.render(in, in.conn)
	s.mu.Unlock()

	var buf bytes.Buffer
	_ = FormatStats(&buf, &st)
	b := buf.Bytes()
	cut, what := chaosCut(kind, b, c.intn)
	pause := c.pause()
	path := c.statsPath(in)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.Write(b[:cut])
	}
	s.mu.Lock()
	c.fault(kind, in, "%s: %d of %d bytes written, then a pause of %v", what, cut, len(b), pause.Round(time.Millisecond))
	s.mu.Unlock()
	if err == nil {
		time.Sleep(pause) // short: not cut by ctx, so that the write always completes
		_, err = f.Write(b[cut:])
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	done := time.Now() // the write is complete from here, whenever the lock comes

	s.mu.Lock()
	defer s.mu.Unlock()
	delete(c.busy, in.ID)
	if in.hold != nil && in.hold.pid == in.PID {
		in.hold = nil
	}
	if s.stopped {
		return
	}
	if err != nil {
		s.logf("error writing %s: %v", path, err)
		return
	}
	in.writes++
	s.last[in.ID] = st
	s.logf("wrote %s write_count=%d", path, st.WriteCount)
	c.logWriteAt(in, &st, done)
}

// render is what write renders for in (sim.go's write, without writing).
// Called with s.mu held.
func (c *Chaos) render(in *inst, conn string) Stats {
	s := c.s
	st := in.eng.stats(in.writes, s.o.LIF)
	st.Socket = in.Socket
	st.Backend = in.backend
	st.PCI = "0x1dd8:0x100a"
	st.MAC = in.MAC
	st.Connection = conn
	st.WriteCount = in.writes
	return st
}

// chaosCut returns where a torn write of kind stops in the file b, and a
// description. intn is the random source.
func chaosCut(kind string, b []byte, intn func(int) int) (int, string) {
	type span struct{ start, end int } // a line: b[start:end] without its '\n'
	var lines []span
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			lines = append(lines, span{i, len(b)})
			break
		}
		lines = append(lines, span{i, i + j})
		i += j + 1
	}
	// QP blocks: header line index .. the blank line that ends it.
	type block struct{ header, blank int }
	var blocks []block
	inQPs := false
	for i, l := range lines {
		text := string(b[l.start:l.end])
		switch {
		case text == "Per-QP Statistics:":
			inQPs = true
		case inQPs && len(text) > 0 && text[0] != ' ':
			inQPs = false
		case inQPs && len(text) > 5 && text[:5] == "  QP ":
			blocks = append(blocks, block{header: i, blank: -1})
		case inQPs && text == "" && len(blocks) > 0 && blocks[len(blocks)-1].blank < 0:
			blocks[len(blocks)-1].blank = i
		}
	}
	switch kind {
	case ChaosTornLine:
		// A line with a value; the cut falls inside its number if it has
		// one, else anywhere inside the line.
		var cands []span
		for _, l := range lines {
			if l.end-l.start >= 2 {
				cands = append(cands, l)
			}
		}
		if len(cands) == 0 {
			return 0, "empty file"
		}
		l := cands[intn(len(cands))]
		lo, hi := l.start+1, l.end // cut in [lo, hi): never right after '\n'
		if k := bytes.LastIndex(b[l.start:l.end], []byte(" : ")); k >= 0 {
			v := l.start + k + 3
			if l.end-v >= 2 {
				lo, hi = v+1, l.end
			}
		}
		cut := lo + intn(hi-lo)
		return cut, fmt.Sprintf("cut inside line %q", string(b[l.start:cut])+"|"+string(b[cut:l.end]))
	case ChaosTornQP:
		if len(blocks) == 0 {
			return chaosCut(ChaosTornLine, b, intn)
		}
		bl := blocks[intn(len(blocks))]
		// The start of a line after the header, up to and including the
		// blank line's start (the block's last line ends, no blank yet).
		first, last := bl.header+1, bl.blank
		if last < first {
			last = len(lines) - 1
		}
		i := first + intn(last-first+1)
		return lines[i].start, fmt.Sprintf("cut inside a QP block, before line %d (QP header at line %d)", i+1, bl.header+1)
	case ChaosTornQPBoundary:
		// Right after a block's blank line, not after the last block; or
		// right after the QP header when there is one block or none.
		var cuts []int
		for _, bl := range blocks {
			if bl.blank >= 0 && bl.blank+1 < len(lines) && lines[bl.blank].end+1 < len(b) {
				cuts = append(cuts, lines[bl.blank].end+1)
			}
		}
		if len(cuts) == 0 {
			if i := bytes.Index(b, []byte("Per-QP Statistics:\n")); i >= 0 && i+19 < len(b) {
				return i + 19, "cut right after the Per-QP Statistics: header (a whole file in form, no QPs)"
			}
			return chaosCut(ChaosTornLine, b, intn)
		}
		cut := cuts[intn(len(cuts))]
		n := 0
		for _, bl := range blocks {
			if bl.blank >= 0 && lines[bl.blank].end+1 <= cut {
				n++
			}
		}
		return cut, fmt.Sprintf("cut after QP block %d of %d (a whole file in form)", n, len(blocks))
	case ChaosTornBuffer:
		if len(b) <= StatsBufferSize {
			return chaosCut(ChaosTornQP, b, intn)
		}
		k := 1 + intn((len(b)-1)/StatsBufferSize)
		return k * StatsBufferSize, fmt.Sprintf("cut at %d x the 4 KiB stdio buffer", k)
	}
	return 0, "empty file"
}

// StatsBufferSize is the stdio buffer size of the server's stats stream
// (write.go's statsBufSize).
const StatsBufferSize = statsBufSize

// ---------------------------------------------------------------------------
// Crashes, pid reuse and restarts.

// crash kills in's server (no shutdown write; manifest and stats file stay)
// and, for pid-reuse, gives its pid to an unrelated process; after the hold
// a new server starts.
func (c *Chaos) crash(ctx context.Context, in *inst, kind string) {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		delete(c.busy, in.ID)
		s.mu.Unlock()
		return
	}
	pid := in.PID
	in.child.kill()
	in.child = nil
	in.hold = &hold{pid: in.PID, reason: "killed"}
	if kind == ChaosCrash {
		c.fault(kind, in, "server pid %d killed; the manifest keeps it, the stats file stays", pid)
	}
	s.mu.Unlock()

	if kind == ChaosPIDReuse {
		sleepCtx(ctx, c.hold()/5) // the dead pid is seen for a scrape or so
		// Outside the lock: the attempts fork and reap processes, which
		// takes long on a busy machine, and the ticks must go on.
		d, same, err := startChildWithPID(pid)
		s.mu.Lock()
		if s.stopped {
			d.kill()
		} else {
			switch {
			case err != nil:
				s.logf("error starting the unrelated process of pid-reuse: %v", err)
				c.fault(kind, in, "server pid %d killed; no unrelated process could be started: %v", pid, err)
			case same:
				c.decoys[in.ID] = d
				c.fault(kind, in, "server pid %d killed; an unrelated process now has pid %d (ns_last_pid); the manifest and the stats file stay", pid, pid)
			default:
				c.decoys[in.ID] = d
				in.PID = d.cmd.Process.Pid
				in.hold.pid = in.PID
				_ = s.writeManifest()
				c.fault(kind, in, "server pid %d killed; the pid could not be reused (not root or taken), so the manifest entry now points at the unrelated process %d; the stats file stays", pid, in.PID)
			}
		}
		s.mu.Unlock()
	}

	sleepCtx(ctx, c.hold())
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(c.busy, in.ID)
	if s.stopped {
		return
	}
	c.faultEnd(kind, in)
	cause := chaosRestartCrash
	if kind == ChaosPIDReuse {
		cause = chaosRestartPIDReuse
	}
	c.restartLocked(in, cause, false)
}

// startChildWithPID starts an unrelated process with pid when it can (root,
// /proc/sys/kernel/ns_last_pid); same tells whether it got it.
func startChildWithPID(pid int) (d *child, same bool, err error) {
	if pid > 1 {
		for range 20 {
			if werr := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); werr != nil {
				break
			}
			d, err = startChild()
			if err != nil {
				return nil, false, err
			}
			if d.cmd.Process.Pid == pid {
				return d, true, nil
			}
			d.kill()
		}
	}
	d, err = startChild()
	return d, false, err
}

// hotReload is "ernicctl hot-reload" of in: a real restart.
func (c *Chaos) hotReload(in *inst) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(c.busy, in.ID)
	if s.stopped {
		return
	}
	c.restartLocked(in, chaosRestartHot, true)
}

// restartLocked starts a new server process for in, like Restart, but with
// the same QP target and reusing the old process's QP handles (a handle
// comes back with counters from zero). shutdownWrite: the old server writes
// its file once more first (not after a crash). Called with s.mu held.
func (c *Chaos) restartLocked(in *inst, cause string, shutdownWrite bool) {
	s := c.s
	oldPID := in.PID
	if shutdownWrite {
		_ = s.write(in, in.conn)
	}
	in.child.kill()
	if d := c.decoys[in.ID]; d != nil {
		d.kill()
		delete(c.decoys, in.ID)
	}
	s.spawn(in)
	in.hold = nil
	in.gen++
	old := in.eng
	in.eng = newEngine(s.o.Seed, in.ID, in.gen, old.target, s.secs)
	// The old handles first, in the old process's order, then the rest.
	var reuse []uint32
	for _, q := range old.qps {
		reuse = append(reuse, q.handle)
	}
	rest := slices.DeleteFunc(slices.Clone(in.eng.handles), func(h uint32) bool { return slices.Contains(reuse, h) })
	in.eng.handles = append(reuse, rest...)
	in.writes = 0
	in.conn = connNotSet
	delete(c.epochs, in.ID)
	c.lastRestart[in.ID] = time.Now()
	c.counts.Restarts[in.ID]++
	c.emit(ChaosRecord{Event: "restart", Kind: cause, ID: in.ID, PID: in.PID, OldPID: oldPID, Gen: in.gen,
		Detail: fmt.Sprintf("new server process, counters from zero, %d QP handles of the old process reused", len(reuse))})
	s.logf("restart %s id=%d pid %d -> %d", cause, in.ID, oldPID, in.PID)
	_ = s.write(in, in.conn)
	_ = s.writeManifest()
}

// ---------------------------------------------------------------------------
// Stats-file replacements.

// replaceFile puts something else in place of in's stats file for the hold,
// then lets the server write it whole again.
func (c *Chaos) replaceFile(ctx context.Context, in *inst, kind string) {
	s := c.s
	path := c.statsPath(in)
	s.mu.Lock()
	if s.stopped {
		delete(c.busy, in.ID)
		s.mu.Unlock()
		return
	}
	in.hold = &hold{pid: in.PID, reason: "chaos: " + kind}
	st := c.render(in, in.conn)
	symlinks := c.counts.Faults[kind]
	s.mu.Unlock()
	// The file work outside the lock (an 8 MiB write takes a while on a
	// busy machine, and the ticks must go on); the instance is held.
	var detail string
	var err error
	switch kind {
	case ChaosUnreadableDir:
		if err = os.Remove(path); err == nil || errors.Is(err, os.ErrNotExist) {
			err = os.Mkdir(path, 0o755)
		}
		detail = "the stats file is a directory"
	case ChaosUnreadableMode:
		err = os.Chmod(path, 0)
		detail = "the stats file has mode 000"
	case ChaosSymlink:
		bogus := chaosBogusStats(st)
		target := filepath.Join(c.outside, fmt.Sprintf("%d.stats", in.ID))
		if err = WriteStatsInPlace(target, &bogus); err == nil {
			link := target
			if symlinks%2 == 1 {
				if rel, rerr := filepath.Rel(s.o.RunDir, target); rerr == nil {
					link = rel
				}
			}
			_ = os.Remove(path)
			err = os.Symlink(link, path)
			detail = fmt.Sprintf("the stats file is a symbolic link to %s, a complete stats file outside the run directory with every counter +%d", link, uint64(chaosBogus))
		}
	case ChaosOversized:
		var buf bytes.Buffer
		bogus := chaosBogusStats(st)
		_ = FormatStats(&buf, &bogus)
		buf.WriteString("Padding:\n")
		for i := 0; int64(buf.Len()) <= c.o.MaxFileBytes+4096; i++ {
			fmt.Fprintf(&buf, "  pad_%08d : %d\n", i, i)
		}
		buf.WriteString("\n")
		err = os.WriteFile(path, buf.Bytes(), 0o644)
		detail = fmt.Sprintf("the stats file is a complete file of %d bytes (limit %d) with every counter +%d", buf.Len(), c.o.MaxFileBytes, uint64(chaosBogus))
	case ChaosGarbage:
		n := 256 + c.intn(16<<10)
		junk := make([]byte, n)
		c.rngMu.Lock()
		for i := range junk {
			junk[i] = byte(c.rng.Uint32())
		}
		c.rngMu.Unlock()
		err = os.WriteFile(path, junk, 0o644)
		detail = fmt.Sprintf("the stats file is %d bytes of binary garbage", n)
	}
	if err != nil {
		detail += fmt.Sprintf(" (failed: %v)", err)
	}
	s.mu.Lock()
	c.fault(kind, in, "%s", detail)
	s.mu.Unlock()

	sleepCtx(ctx, c.hold())

	s.mu.Lock()
	defer s.mu.Unlock()
	switch kind {
	case ChaosUnreadableMode:
		_ = os.Chmod(path, 0o644)
	default:
		_ = os.RemoveAll(path)
	}
	delete(c.busy, in.ID)
	if in.hold != nil && in.hold.pid == in.PID {
		in.hold = nil
	}
	if s.stopped {
		return
	}
	c.faultEnd(kind, in)
	_ = s.write(in, in.conn) // the server's next write, whole
}

// chaosBogusStats is st with every counter raised by chaosBogus (values no
// complete write had).
func chaosBogusStats(st Stats) Stats {
	st = cloneStats(st)
	add := func(v *uint64) {
		if *v < math.MaxUint64/2 {
			*v += chaosBogus
		}
	}
	d := &st.Device
	for _, v := range []*uint64{&d.Commands, &d.Bar0Reads, &d.Bar0Writes, &d.UARReads, &d.UARWrites,
		&d.Interrupts, &d.ResetCount, &d.BytesSent, &d.BytesReceived, &d.BytesRDMARead,
		&d.BytesRDMAWrite, &d.IPBytesTx, &d.IPBytesRx} {
		add(v)
	}
	add(&st.WriteCount)
	for i := range st.QPs {
		q := &st.QPs[i]
		for _, v := range []*uint64{&q.DoorbellSend, &q.DoorbellRecv, &q.WQEsProcessed, &q.CQEsPosted,
			&q.BytesSent, &q.BytesReceived, &q.BytesRDMARead, &q.BytesRDMAWrite} {
			add(v)
		}
		for j := range q.Opcodes {
			add(&q.Opcodes[j].Value)
		}
	}
	for i := range st.LIF {
		add(&st.LIF[i].Value)
	}
	return st
}

// ---------------------------------------------------------------------------
// Counter mutations (effective from the next tick's write).

func (c *Chaos) mutate(in *inst, kind string) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(c.busy, in.ID)
	if s.stopped {
		return
	}
	qps := c.sampledQPs(in)
	if len(qps) == 0 {
		return
	}
	switch kind {
	case ChaosQPReuse:
		q := qps[c.intn(len(qps))]
		before := q.wqes
		q.dbSend, q.dbRecv, q.wqes, q.cqes = 0, 0, 0, 0
		q.sent, q.recv, q.rread, q.rwrite = 0, 0, 0, 0
		q.ops = [len(OpcodeNames)]uint64{}
		q.other = 0
		if c.epochs[in.ID] == nil {
			c.epochs[in.ID] = map[uint32]int{}
		}
		c.epochs[in.ID][q.handle]++
		c.faultQP(kind, in, q.handle, "QP %d destroyed and its handle reused: its counters drop to zero (wqes_processed was %d), epoch %d",
			q.handle, before, c.epochs[in.ID][q.handle])
	case ChaosNear2p64:
		in.eng.lif[lifIndex[ChaosNearMaxLIF]] = chaosNearMaxValue
		in.eng.lif[lifIndex[ChaosAboveI64LIF]] = 1 << 63
		in.eng.lif[lifIndex[ChaosMaxI64LIF]] = math.MaxInt64
		detail := fmt.Sprintf("LIF %s=%d, %s=%d, %s=%d", ChaosNearMaxLIF, uint64(chaosNearMaxValue),
			ChaosAboveI64LIF, uint64(1<<63), ChaosMaxI64LIF, uint64(math.MaxInt64))
		for _, q := range qps {
			if q.profile == profWriter || q.profile == profSender { // never reads: rread stays
				q.rread = math.MaxUint64 - 4096
				detail += fmt.Sprintf(", QP %d bytes_rdma_read=%d", q.handle, q.rread)
				break
			}
		}
		c.fault(kind, in, "%s", detail)
	case ChaosWrapOther:
		q := qps[c.intn(len(qps))]
		if q.other == 0 {
			q.other = 1
			q.wqes++
		}
		q.ops[opSend] += q.other + 5
		c.faultQP(kind, in, q.handle, "QP %d: opcode lines sum to wqes_processed+5, so (other opcodes) prints %d", q.handle, uint64(math.MaxUint64-4))
	}
}

// ---------------------------------------------------------------------------
// Manifest and run-directory faults (run with c.global held exclusively).

// manifestSnapshot returns the manifest entries. Called with s.mu held.
func (c *Chaos) manifestSnapshot() []Instance {
	list := make([]Instance, 0, len(c.s.insts))
	for _, in := range c.s.insts {
		list = append(list, in.Instance)
	}
	return list
}

func (c *Chaos) manifestPath() string { return filepath.Join(c.s.o.RunDir, "instances.json") }

// chunkedWrite truncates path and writes b in chunks of 16..256 bytes with
// pauses of up to 3 ms: a slow writer.
func (c *Chaos) chunkedWrite(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	for len(b) > 0 && err == nil {
		n := min(len(b), 16+c.intn(241))
		_, err = f.Write(b[:n])
		b = b[n:]
		time.Sleep(time.Duration(c.intn(3000)) * time.Microsecond)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *Chaos) manifestRace(ctx context.Context) bool {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return true
	}
	list := c.manifestSnapshot()
	s.mu.Unlock()
	indented, err := MarshalManifest(list)
	if err != nil {
		return true
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, indented)
	path := c.manifestPath()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, b := range [][]byte{indented, compact.Bytes()} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.chunkedWrite(path, b)
		}()
	}
	wg.Wait()
	final, _ := os.ReadFile(path)
	s.mu.Lock()
	c.fault(ChaosManifestRace, nil, "two writers truncated and rewrote instances.json at once (%d and %d bytes); it is now %d bytes, valid JSON: %v (errors %v)",
		len(indented), compact.Len(), len(final), json.Valid(final), errors.Join(errs...))
	s.mu.Unlock()
	sleepCtx(ctx, c.hold())
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		c.faultEnd(ChaosManifestRace, nil)
		_ = s.writeManifest()
	}
	return true
}

func (c *Chaos) manifestTorn(ctx context.Context) bool {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return true
	}
	list := c.manifestSnapshot()
	s.mu.Unlock()
	b, err := MarshalManifest(list)
	if err != nil || len(b) < 2 {
		return true
	}
	cut := c.intn(len(b) - 1)
	pause := c.pause()
	f, err := os.OpenFile(c.manifestPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.Write(b[:cut])
	}
	s.mu.Lock()
	c.fault(ChaosManifestTorn, nil, "instances.json: %d of %d bytes written, then a pause of %v", cut, len(b), pause.Round(time.Millisecond))
	s.mu.Unlock()
	if err == nil {
		time.Sleep(pause)
		_, err = f.Write(b[cut:])
	}
	if f != nil {
		_ = f.Close()
	}
	if err != nil {
		s.mu.Lock()
		s.logf("error writing manifest: %v", err)
		s.mu.Unlock()
	}
	return true
}

func (c *Chaos) runDirRecreate(ctx context.Context) bool {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return true
	}
	err := os.RemoveAll(s.o.RunDir)
	gone := c.hold() / 2
	c.fault(ChaosRunDirRecreate, nil, "run directory removed for %v (%v)", gone.Round(time.Millisecond), err)
	s.mu.Unlock()
	sleepCtx(ctx, gone)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return true
	}
	if err := os.MkdirAll(s.o.RunDir, 0o755); err != nil {
		s.logf("error creating %s: %v", s.o.RunDir, err)
		return true
	}
	c.faultEnd(ChaosRunDirRecreate, nil)
	_ = s.writeManifest()
	for _, in := range s.insts {
		if !in.held() {
			_ = s.write(in, in.conn)
		}
	}
	return true
}

// addHuge adds the huge instance: a worker with HugeQPs QPs.
func (c *Chaos) addHuge() bool {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return true
	}
	id := 1
	for _, in := range s.insts {
		id = max(id, in.ID+1)
	}
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
	in.VM = s.newVM(id, float64(time.Now().UnixMicro())/1e6)
	s.spawn(in)
	in.eng = newEngine(s.o.Seed, id, 0, c.o.HugeQPs, s.secs)
	s.insts = append(s.insts, in)
	c.lastRestart[id] = time.Now()
	c.fault(ChaosHugeInstance, in, "instance %d added with %d QPs (they appear over the first four writes)", id, c.o.HugeQPs)
	_ = s.write(in, in.conn)
	_ = s.writeManifest()
	return true
}

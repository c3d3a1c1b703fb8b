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
	"slices"
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
//     The unrelated process runs the simulator's own binary: at every
//     other pid-reuse (the first not) through a link named ChaosDecoyComm,
//     so that its command name is not the server's; otherwise its command
//     name is the server's, and a reader can only tell it by its start
//     time. The detail says which ("command name: ...").
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
//   - manifest-grow: a worker with the simulator's QP count is added to the
//     manifest (the manifest grows over the run; with the collector's
//     max_instances below the count, the new instances are the unpublished
//     ones: the highest ids).
//   - invalid-utf8: for the hold, every write of the stats file carries one
//     more LIF counter, ChaosBadLIFName, and the connection state
//     ChaosBadConnection, both with invalid UTF-8; the counter's value (the
//     Unix time of the fault, so that it only grows from one fault to the
//     next) is the record's Value.
//   - future-mtime: the stats file's mtime is set FutureMtime (3 h) ahead
//     and the server writes nothing for the hold.
//
// After each lasting fault (a hold of HoldMin..HoldMax; HoldMin more for
// pid-reuse's unrelated process, invalid-utf8 and future-mtime, whose state
// a reader's published values are checked against) the state is put
// back: the fault file is removed and the server writes its file whole at
// once. Real restarts (a new server process, counters from zero: hot-reload,
// and the recoveries of crash and pid-reuse) are logged as "restart" records,
// not faults.
//
// Chaos needs Options.LIF for near-2^64 and invalid-utf8's counter; the
// manager (instance 1, whose file is only written at startup and shutdown)
// gets no fault of its own.

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
	ChaosManifestGrow   = "manifest-grow"
	ChaosInvalidUTF8    = "invalid-utf8"
	ChaosFutureMtime    = "future-mtime"
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
	ChaosManifestGrow, ChaosInvalidUTF8, ChaosFutureMtime,
}

// ChaosBadLIFName is the LIF counter name the invalid-utf8 fault writes:
// bytes 0xff 0xfe are not UTF-8.
const ChaosBadLIFName = "rx_chaos_\xff\xfe_bad"

// ChaosBadConnection is the connection state the invalid-utf8 fault
// writes: connected, with bytes that are not UTF-8.
const ChaosBadConnection = "connected (chaos \xfe)"

// ChaosDecoyComm is the command name of the unrelated process of every
// other pid-reuse fault.
const ChaosDecoyComm = "ernic-decoy"

// FutureMtime is how far ahead the future-mtime fault sets the stats
// file's mtime.
const FutureMtime = 3 * time.Hour

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
	// MaxInstances is the collector's max_instances: when positive,
	// instance faults are aimed only at the MaxInstances instances of
	// lowest id, the ones it publishes. Default (0) all instances.
	MaxInstances int
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
	pidReuses   int            // pid-reuse faults begun
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

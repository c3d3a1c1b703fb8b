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

// Chaos mode injects every fault a reader of the run directory can meet and
// logs faults, restarts and complete writes (README.md, Chaos mode).

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
	// ChaosRestart is a hot-reload, a real restart, scheduled like the faults.
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

// ChaosTornKinds are the torn-write kinds, in the torn writer's order.
var ChaosTornKinds = []string{ChaosTornEmpty, ChaosTornLine, ChaosTornQP, ChaosTornQPBoundary, ChaosTornBuffer}

// ChaosKinds are the scheduled kinds in README.md's order; huge-instance first.
var ChaosKinds = []string{
	ChaosManifestRace, ChaosManifestTorn, ChaosCrash, ChaosPIDReuse, ChaosRunDirRecreate,
	ChaosUnreadableDir, ChaosUnreadableMode, ChaosSymlink, ChaosOversized, ChaosGarbage,
	ChaosHugeInstance, ChaosQPReuse, ChaosNear2p64, ChaosWrapOther, ChaosRestart,
	ChaosManifestGrow, ChaosInvalidUTF8, ChaosFutureMtime,
}

// ChaosBadLIFName is invalid-utf8's LIF counter name (0xff 0xfe: not UTF-8).
const ChaosBadLIFName = "rx_chaos_\xff\xfe_bad"

// ChaosBadConnection is invalid-utf8's connection state.
const ChaosBadConnection = "connected (chaos \xfe)"

// ChaosDecoyComm is the command name of every other pid-reuse decoy.
const ChaosDecoyComm = "ernic-decoy"

// FutureMtime is how far ahead future-mtime sets the stats file's mtime.
const FutureMtime = 3 * time.Hour

// ChaosSampleQPBelow: the write log carries the QPs with a lower handle;
// faults aimed at one QP pick one of these.
const ChaosSampleQPBelow = 32

// ChaosSampleLIF are the LIF counters the write log carries.
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

// chaosBogus is added to every counter of files never to be published.
const chaosBogus = 1_000_000_000_000

// ChaosOptions configures a Chaos runner. Zero values take the defaults.
type ChaosOptions struct {
	// Events receives the JSON-lines log; writes are serialised. May be nil.
	Events io.Writer
	// Every is the time between two scheduled events (default 3s).
	Every time.Duration
	// TornEvery is the time between torn stats writes (default 1s; <0: none).
	TornEvery time.Duration
	// HoldMin and HoldMax bound a lasting fault (default 2s..4s).
	HoldMin, HoldMax time.Duration
	// RestartGap is the least time between restarts of one instance (default
	// 10s), so that a collector scraping every second sees every process.
	RestartGap time.Duration
	// MaxFileBytes is the collector's max_file_bytes (default 64 MiB).
	MaxFileBytes int64
	// HugeQPs is huge-instance's QP count (default 10000; negative: none).
	HugeQPs int
	// Kinds, when not empty, are the scheduled kinds; default all.
	Kinds []string
	// Seed makes the choices reproducible (not the timing).
	Seed int64
	// MaxInstances is the collector's max_instances: when positive, faults aim
	// only at the instances it publishes.
	MaxInstances int
}

// ChaosCounts sums up a chaos run.
type ChaosCounts struct {
	Faults   map[string]int // by kind
	Skipped  map[string]int // by kind
	Restarts map[int]int    // real restarts by instance id
	Writes   int            // complete stats writes logged
}

// Chaos injects faults into a running Sim (README.md, Chaos mode).
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

// NewChaos returns a Chaos runner for s (New'd, maybe started); every
// complete write is logged from now on.
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

// Start begins injecting until ctx is done or Stop; the Sim must be running.
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

// Stop stops injecting and waits until every fault is undone. Call it
// before the Sim's Stop. Idempotent.
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// Chaos scheduling: randomness, the cycle of kinds and the choice of instance.

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

// checkedHold is the hold of the faults whose state a reader's published
// values are checked against while it lasts (pid-reuse's unrelated process,
// invalid-utf8, future-mtime): HoldMin longer, so that a reader scraping
// every HoldMin/2 or so has a few scrapes inside it.
func (c *Chaos) checkedHold() time.Duration { return c.hold() + c.o.HoldMin }

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
	case ChaosManifestRace, ChaosManifestTorn, ChaosRunDirRecreate, ChaosHugeInstance, ChaosManifestGrow:
		c.global.Lock()
		defer c.global.Unlock()
		switch kind {
		case ChaosManifestRace:
			return c.manifestRace(ctx)
		case ChaosManifestTorn:
			return c.manifestTorn(ctx)
		case ChaosRunDirRecreate:
			return c.runDirRecreate(ctx)
		case ChaosManifestGrow:
			return c.addWorker()
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
		case ChaosInvalidUTF8:
			c.invalidUTF8(ctx, in)
		case ChaosFutureMtime:
			c.futureMtime(ctx, in)
		}
	}()
	return true
}

// pick chooses and marks busy an attached worker that is in no fault and
// not held, among the first MaxInstances if set; restart: none restarted
// within RestartGap; qps: one with a sampled QP. nil when there is none.
func (c *Chaos) pick(kind string, restart, qps bool) *inst {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	now := time.Now()
	var cands []*inst
	for i, in := range s.insts {
		if c.o.MaxInstances > 0 && i >= c.o.MaxInstances {
			break // insts are in id order: the rest are not published
		}
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

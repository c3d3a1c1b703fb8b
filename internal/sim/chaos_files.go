// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"
)

// replaceFile puts something else in place of in's stats file for the hold,
// then lets the server write it whole again.
func (c *Chaos) replaceFile(ctx context.Context, in *inst, kind string) {
	s := c.s
	path := c.statsPath(in)
	if !c.beginHold(in, kind) {
		return
	}
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

// Counter mutations take effect at the next tick's write.

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

// invalidUTF8 is the invalid-utf8 fault (README.md, Chaos mode).
func (c *Chaos) invalidUTF8(ctx context.Context, in *inst) {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		delete(c.busy, in.ID)
		s.mu.Unlock()
		return
	}
	v := uint64(time.Now().Unix())
	in.extraLIF = []Counter{{Name: ChaosBadLIFName, Value: v}}
	in.badConn = ChaosBadConnection
	c.faultRecord(ChaosRecord{Kind: ChaosInvalidUTF8, Value: v,
		Detail: fmt.Sprintf("every write carries the LIF counter %q = %d and the connection state %q (invalid UTF-8)", ChaosBadLIFName, v, ChaosBadConnection)}, in)
	s.mu.Unlock()

	sleepCtx(ctx, c.checkedHold())

	s.mu.Lock()
	defer s.mu.Unlock()
	in.extraLIF, in.badConn = nil, ""
	delete(c.busy, in.ID)
	if !s.stopped {
		c.faultEnd(ChaosInvalidUTF8, in)
		// A clean complete write at once: the next fault of in may come
		// before the next tick, and a reader falls back to the last
		// complete write.
		_ = s.write(in, in.conn)
	}
}

// futureMtime is the future-mtime fault (README.md, Chaos mode).
func (c *Chaos) futureMtime(ctx context.Context, in *inst) {
	s := c.s
	path := c.statsPath(in)
	if !c.beginHold(in, ChaosFutureMtime) {
		return
	}
	at := time.Now().Add(FutureMtime)
	detail := fmt.Sprintf("the stats file's mtime is %s, %v ahead; no write for the hold", at.UTC().Format(time.RFC3339), FutureMtime)
	if err := os.Chtimes(path, at, at); err != nil {
		detail += fmt.Sprintf(" (failed: %v)", err)
	}
	c.fault(ChaosFutureMtime, in, "%s", detail)
	s.mu.Unlock()

	sleepCtx(ctx, c.checkedHold())

	ok := c.endHold(in)
	defer s.mu.Unlock()
	if !ok {
		return
	}
	c.faultEnd(ChaosFutureMtime, in)
	_ = s.write(in, in.conn) // the server's next write, whole
}

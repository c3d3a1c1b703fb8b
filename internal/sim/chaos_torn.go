// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"
)

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
	if !c.beginHold(in, kind) {
		return
	}
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

	ok := c.endHold(in)
	defer s.mu.Unlock()
	if !ok {
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

// beginHold takes s.mu and holds in's writes for a fault of kind; when the
// simulation has stopped it frees in and returns false, s.mu released.
func (c *Chaos) beginHold(in *inst, kind string) bool {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		delete(c.busy, in.ID)
		s.mu.Unlock()
		return false
	}
	in.hold = &hold{pid: in.PID, reason: "chaos: " + kind}
	return true
}

// endHold takes s.mu (the caller releases it), ends a fault's hold of in's
// writes and frees in for other faults; false when the simulation has
// stopped.
func (c *Chaos) endHold(in *inst) bool {
	c.s.mu.Lock()
	delete(c.busy, in.ID)
	if in.hold != nil && in.hold.pid == in.PID {
		in.hold = nil
	}
	return !c.s.stopped
}

// render is Sim.render, called with s.mu held.
func (c *Chaos) render(in *inst, conn string) Stats { return c.s.render(in, conn) }

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

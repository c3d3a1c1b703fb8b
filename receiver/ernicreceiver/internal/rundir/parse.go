// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

type section uint8

const (
	secPreamble section = iota
	secInstance
	secDevice
	secQPs
	secLIF
	secOther
)

// parser is the state of one parseStats call.
type parser struct {
	s    *Stats
	sc   scratch // s.scratch, moved out while s is reset and put back at the end
	memo bool

	sec       section
	sawQPs    bool
	qp        *QP // current QP block, nil outside one
	inOpcodes bool
	// opStart is where the block's opcode lines start in sc.ops.
	opStart  int
	lastLine []byte // last non-empty stripped line
	lastRaw  []byte // the same line as written (column kept)
	lineNo   int
	// memos[i] is how line i of the last QP block was cut; bi is the line's index.
	memos [memoLines]lineMemo
	bi    int
}

// ParseStats parses a whole stats file; the error wraps ErrIncomplete for an
// incomplete one, and single lines' problems are in Stats.Problems.
func ParseStats(data []byte) (*Stats, error) {
	s := &Stats{}
	if err := ParseStatsInto(s, data); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseStatsInto is ParseStats into s, reusing the memory of its lists,
// which the caller must be done with; on error s holds no usable snapshot.
func ParseStatsInto(s *Stats, data []byte) error {
	return parseStats(s, data, true)
}

// parseStats parses data into s. memo enables lineMemo's shortcut; the
// tests parse without it to check that it changes nothing.
func parseStats(s *Stats, data []byte, memo bool) error {
	// The lists grow from what the last parse into s left: a few allocations a
	// file, none once s has seen the file.
	p := parser{s: s, sc: s.scratch, memo: memo}
	p.sc.ops = p.sc.ops[:0]
	clear(p.sc.qpBits)
	clear(p.sc.qpMap)
	clear(p.sc.lifPos[:])
	*s = Stats{QPs: s.QPs[:0], LIF: s.LIF[:0]}
	defer func() { s.scratch = p.sc }()
	if err := checkLines(data); err != nil {
		return err
	}
	for rest := data; len(rest) > 0; {
		if memo && p.qp != nil {
			if rest = p.memoQPLines(rest); len(rest) == 0 {
				break
			}
		}
		p.lineNo++
		nl := bytes.IndexByte(rest, '\n')
		raw := rest[:nl]
		rest = rest[nl+1:]
		line, key, val, hasVal := cutLine(raw)
		if memo && p.qp != nil && p.bi < memoLines {
			p.memos[p.bi].learn(raw, line, key, val)
		}
		p.bi++
		if len(line) == 0 {
			// An empty line ends a QP block.
			p.qp, p.inOpcodes = nil, false
			continue
		}
		p.lastLine, p.lastRaw = line, raw
		column0 := raw[0] != ' ' && raw[0] != '\t'

		// Bare header at column 0: starts a section and closes any QP.
		if column0 && !hasVal && line[len(line)-1] == ':' {
			p.header(line)
			continue
		}
		if column0 && (hasVal && string(key) == writeCount || !hasVal && bytes.HasPrefix(line, []byte(writeCount+":"))) {
			p.writeCountLine(line, val, hasVal)
			continue
		}

		switch p.sec {
		case secInstance:
			if hasVal {
				s.instanceLine(key, val)
			}
		case secDevice:
			if hasVal {
				p.deviceLine(key, val)
			}
		case secQPs:
			p.qpLine(line, key, val, hasVal)
		case secLIF:
			if hasVal {
				p.lifLine(key, val)
			}
		}
	}
	return p.checkEnd(data)
}

// checkLines rejects data that is not whole lines of LF-ended text.
func checkLines(data []byte) error {
	if len(data) == 0 {
		return incomplete("empty file")
	}
	if data[len(data)-1] != '\n' {
		return incomplete("file does not end with a newline (cut inside a line)")
	}
	if bytes.IndexByte(data, '\r') >= 0 {
		return errors.New("CR characters (CRLF line endings?): not a stats file of a known server format, whose lines end in LF")
	}
	return nil
}

func (p *parser) header(line []byte) {
	p.qp, p.inOpcodes = nil, false
	switch {
	case string(line) == "Instance:":
		p.sec = secInstance
	case string(line) == headerDevice:
		p.sec = secDevice
	case string(line) == headerQPs:
		p.sec = secQPs
		p.sawQPs = true
	case bytes.HasPrefix(line, []byte("LIF")):
		p.sec = secLIF
	default:
		p.sec = secOther
	}
}

// writeCountLine takes `Write count : N`, or `Write count: N` in older
// servers (no value cut: hasVal false).
func (p *parser) writeCountLine(line, val []byte, hasVal bool) {
	s := p.s
	if !hasVal {
		val = bytes.TrimSpace(line[len(writeCount)+1:])
	}
	n, ok := parseUint(val)
	if !ok {
		s.Problems = append(s.Problems, &LineError{p.lineNo, fmt.Sprintf("Write count %q is not an unsigned 64-bit integer", val)})
		return
	}
	if s.HasWriteCount {
		s.duplicate(p.lineNo, writeCount)
	}
	s.WriteCount, s.HasWriteCount = n, true
}

// deviceLine takes one `key : value` line of `Device Statistics:`, where a
// LIF counter name is a LIF counter too.
func (p *parser) deviceLine(key, val []byte) {
	s := p.s
	if _, ok := lifName(key); ok {
		p.lifLine(key, val)
		return
	}
	k, known := lookupDeviceKey(key)
	if !known {
		return // a key a newer server added; not published
	}
	n, ok := parseUint(val)
	if !ok {
		s.Problems = append(s.Problems, &LineError{p.lineNo, fmt.Sprintf("device counter %s: %q is not an unsigned 64-bit integer", key, val)})
		return
	}
	if !s.Device.set(k, n) {
		s.duplicate(p.lineNo, "device counter "+string(key))
	}
}

// lifLine takes one `name : N` line of a LIF counter.
func (p *parser) lifLine(key, val []byte) {
	n, ok := parseUint(val)
	if !ok {
		p.s.Problems = append(p.s.Problems, &LineError{p.lineNo, fmt.Sprintf("LIF counter %s: %q is not an unsigned 64-bit integer", key, val)})
		return
	}
	p.s.addLIF(&p.sc, key, n, p.lineNo)
}

// qpLine takes one line of `Per-QP Statistics:`: a `QP <handle>:` header,
// or a counter, the opcode header or an opcode line of the current block.
func (p *parser) qpLine(line, key, val []byte, hasVal bool) {
	s := p.s
	h, isHeader, ok := qpHeader(line)
	if isHeader {
		p.openQP(h, ok, line)
		return
	}
	if p.qp == nil {
		return // `(no QPs created yet)`, or lines of an ignored block
	}
	if !hasVal {
		if string(line) == wqesByOpcode {
			p.inOpcodes = true
			return
		}
		if key, val, hasVal = p.oldOpcodeLine(line); !hasVal {
			return
		}
	}
	n, ok := parseUint(val)
	if !ok {
		s.Problems = append(s.Problems, &LineError{p.lineNo, fmt.Sprintf("QP %d %s: %q is not an unsigned 64-bit integer", p.qp.Handle, key, val)})
		return
	}
	k, known := lookupQPKey(key)
	s.qpValue(p.qp, &p.sc.ops, p.opStart, p.inOpcodes, key, k, known, string(key) == otherOpcodes, n, p.lineNo)
}

// openQP starts h's block; a bad handle or one seen before leaves it out.
func (p *parser) openQP(h uint32, ok bool, line []byte) {
	s := p.s
	p.inOpcodes = false
	if !ok {
		s.Problems = append(s.Problems, &LineError{p.lineNo, fmt.Sprintf("QP header %q: the handle is not a decimal uint32; block ignored", line)})
		p.qp = nil
		return
	}
	if p.sc.seenQP(h) {
		s.Problems = append(s.Problems, &LineError{p.lineNo, "QP " + strconv.FormatUint(uint64(h), 10) + " printed twice; the second block is ignored"})
		p.qp = nil
		return
	}
	s.QPs = append(s.QPs, QP{Handle: h})
	p.qp = &s.QPs[len(s.QPs)-1]
	p.bi = 0
	p.opStart = len(p.sc.ops)
}

// oldOpcodeLine cuts an opcode line without ` : `: older servers print
// `NAME: N` for 20- and 21-character names.
func (p *parser) oldOpcodeLine(line []byte) (key, val []byte, ok bool) {
	if !p.inOpcodes {
		return nil, nil, false
	}
	i := bytes.LastIndexByte(line, ':')
	if i <= 0 {
		return nil, nil, false
	}
	return bytes.TrimSpace(line[:i]), bytes.TrimSpace(line[i+1:]), true
}

// memoQPLines takes the lines at the start of rest that the memo cuts, in a
// tight loop on locals, and returns what follows.
func (p *parser) memoQPLines(rest []byte) []byte {
	qp, inOpcodes, lineNo, bi := p.qp, p.inOpcodes, p.lineNo, p.bi
	var last []byte // the last line taken, as written
	start := 0      // where its stripped line starts
	for len(rest) > 0 {
		if rest[0] == '\n' {
			// An empty line ends the block.
			lineNo++
			rest = rest[1:]
			qp, inOpcodes = nil, false
			break
		}
		if bi >= memoLines || !p.memos[bi].indented {
			break
		}
		// The line must be m.prefix, one to 19 digits (20 may overflow: the general
		// path checks them) and '\n'; or m.prefix and '\n' for the opcode header.
		m := &p.memos[bi]
		n := len(m.prefix)
		if n == 0 || len(rest) <= n || !bytes.Equal(rest[:n], m.prefix) {
			break
		}
		if m.bare {
			if rest[n] != '\n' {
				break
			}
			lineNo++
			last, start = rest[:n], m.start
			inOpcodes = true
			rest = rest[n+1:]
			bi++
			continue
		}
		end := n
		var v uint64
		for ; end < len(rest); end++ {
			d := rest[end] - '0'
			if d > 9 {
				break
			}
			v = v*10 + uint64(d)
		}
		if end == n || end-n > 19 || end == len(rest) || rest[end] != '\n' {
			break
		}
		lineNo++
		last, start = rest[:end], m.start
		if k := m.qpKey; !inOpcodes && m.qpKnown && qp.present&(1<<k) == 0 {
			// qpValue's common case, inline.
			qp.values[k] = v
			qp.present |= 1 << k
		} else {
			p.s.qpValue(qp, &p.sc.ops, p.opStart, inOpcodes, m.key, m.qpKey, m.qpKnown, m.isOther, v, lineNo)
		}
		rest = rest[end+1:]
		bi++
	}
	if last != nil {
		p.lastRaw, p.lastLine = last, last[start:]
	}
	p.qp, p.inOpcodes, p.lineNo, p.bi = qp, inOpcodes, lineNo, bi
	return rest
}

// checkEnd applies the end rules of a whole file (README.md §4).
func (p *parser) checkEnd(data []byte) error {
	if !p.sawQPs {
		return incomplete("no \"" + headerQPs + "\" header")
	}
	// A whole file ends right after the QP header or with an empty line.
	endsBlank := len(data) >= 2 && data[len(data)-2] == '\n'
	// The header counts only at column 0, the old no-QPs line only right under
	// it: the same words inside a QP block are not an end.
	endsHeader := string(p.lastRaw) == headerQPs ||
		(string(p.lastLine) == noQPsLine && p.sec == secQPs && len(p.s.QPs) == 0)
	if !endsBlank && !endsHeader {
		return incomplete("file does not end with an empty line (cut inside a block)")
	}
	for _, group := range requiredDevice {
		found := false
		for _, k := range group {
			if _, ok := p.s.Device.Get(k); ok {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("device counter %s missing: not a stats file of a known server format", group[0])
		}
	}
	return nil
}

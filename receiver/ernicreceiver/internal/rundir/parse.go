// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"bytes"
	"fmt"
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

const (
	headerDevice = "Device Statistics:"
	headerQPs    = "Per-QP Statistics:"
	noQPsLine    = "(no QPs created yet)"
	otherOpcodes = "(other opcodes)"
	wqesByOpcode = "WQEs by opcode:"
	writeCount   = "Write count"
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
				s.addLIF(&p.sc, key, val, p.lineNo)
			}
		}
	}
	return p.checkEnd(data)
}

// qpValue applies a `key : n` line of qp's block: an opcode count when
// inOpcodes, else the counter k when known. A key printed twice is reported.
func (s *Stats) qpValue(qp *QP, ops *[]Counter, opStart int, inOpcodes bool, key []byte, k QPKey, known, isOther bool, n uint64, lineNo int) {
	if inOpcodes {
		if isOther {
			if qp.HasOther {
				s.duplicate(lineNo, fmt.Sprintf("QP %d %s", qp.Handle, key))
			}
			qp.Other, qp.HasOther = n, true
			return
		}
		if !setCounter(ops, opStart, key, n, opcodeName) {
			s.duplicate(lineNo, fmt.Sprintf("QP %d opcode %s", qp.Handle, key))
		}
		qp.Opcodes = (*ops)[opStart:len(*ops):len(*ops)]
		return
	}
	if known {
		if qp.present&(1<<k) != 0 {
			s.duplicate(lineNo, fmt.Sprintf("QP %d %s", qp.Handle, key))
		}
		qp.values[k] = n
		qp.present |= 1 << k
	}
}

// requiredDevice lists the device counters every known server format prints
// (any one key of each group).
var requiredDevice = [][]DeviceKey{
	{Commands}, {Interrupts}, {ResetCount, FLRResetCount},
	{MMIOReads, RegsReads}, {MMIOWrites, RegsWrites},
	{BytesSent}, {BytesReceived}, {BytesRDMARead}, {BytesRDMAWrite},
}

func (s *Stats) addLIF(sc *scratch, key, val []byte, lineNo int) {
	n, ok := parseUint(val)
	if !ok {
		s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("LIF counter %s: %q is not an unsigned 64-bit integer", key, val)})
		return
	}
	name, i, known := lifIndex.lookup(key)
	if !known {
		// A name the ionic driver may have added: searched for.
		if !setCounter(&s.LIF, 0, key, n, lifCounterName) {
			s.duplicate(lineNo, "LIF counter "+string(key))
		}
		return
	}
	if p := sc.lifPos[i]; p > 0 {
		s.LIF[p-1].Value = n
		s.duplicate(lineNo, "LIF counter "+name)
		return
	}
	s.LIF = append(s.LIF, Counter{Name: name, Value: n})
	sc.lifPos[i] = int32(len(s.LIF))
}

// duplicate records a key printed twice in one scope: the last value is
// used, never the sum.
func (s *Stats) duplicate(lineNo int, what string) {
	s.Problems = append(s.Problems, &LineError{lineNo, what + " printed twice; the last value is used"})
}

// setCounter sets the counter key among (*cs)[from:], appending it when
// absent (false when present). The lists are short: linear beats a map.
func setCounter(cs *[]Counter, from int, key []byte, v uint64, name func([]byte) string) bool {
	for i := from; i < len(*cs); i++ {
		if (*cs)[i].Name == string(key) {
			(*cs)[i].Value = v
			return false
		}
	}
	*cs = append(*cs, Counter{Name: name(key), Value: v})
	return true
}

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

const (
	headerDevice = "Device Statistics:"
	headerQPs    = "Per-QP Statistics:"
	noQPsLine    = "(no QPs created yet)"
	otherOpcodes = "(other opcodes)"
	wqesByOpcode = "WQEs by opcode:"
	writeCount   = "Write count"
)

// parseStats parses data into s. memo enables the QP-line shortcut of
// lineMemo; the tests parse without it to check that it changes nothing.
func parseStats(s *Stats, data []byte, memo bool) error {
	sc := s.scratch
	sc.ops = sc.ops[:0]
	clear(sc.qpBits)
	clear(sc.qpMap)
	clear(sc.lifPos[:])
	*s = Stats{QPs: s.QPs[:0], LIF: s.LIF[:0]}
	defer func() { s.scratch = sc }()
	if len(data) == 0 {
		return incomplete("empty file")
	}
	if data[len(data)-1] != '\n' {
		return incomplete("file does not end with a newline (cut inside a line)")
	}
	if bytes.IndexByte(data, '\r') >= 0 {
		return errors.New("CR characters (CRLF line endings?): not a stats file of a known server format, whose lines end in LF")
	}
	var (
		sec       = secPreamble
		qp        *QP // current QP block, nil outside one
		inOpcodes bool
		sawQPs    bool
		lastLine  []byte // last non-empty stripped line
		lastRaw   []byte // the same line as written (column kept)
		lineNo    int
	)
	// The QP list, its duplicate index and the opcode lines of all QPs
	// (kept in one backing array; each QP's Opcodes is a window of it) grow
	// by appending, from what the last parse into s left: a few allocations
	// per file, not per QP, and none once s has seen the file.
	ops := sc.ops
	defer func() { sc.ops = ops }()
	opStart := 0
	// memos[i] is how line i of the last QP block was cut, and bi is the
	// index of the current line in its block.
	var memos [memoLines]lineMemo
	bi := 0
	for rest := data; len(rest) > 0; {
		if memo && qp != nil {
			// The indented `key : digits` lines of a QP block that the
			// memo cuts, in a tight loop: the general path below would
			// reach qpValue with the same key, looked up when the memo
			// learnt it.
			for len(rest) > 0 {
				if rest[0] == '\n' {
					// An empty line ends the block.
					lineNo++
					rest = rest[1:]
					qp, inOpcodes = nil, false
					break
				}
				if bi >= memoLines || !memos[bi].indented {
					break
				}
				// The line must be m.prefix, then one to 19 digits (20 may
				// overflow: the general path checks them) and '\n'; or,
				// for the opcode header, m.prefix and '\n'.
				m := &memos[bi]
				p := len(m.prefix)
				if p == 0 || len(rest) <= p || !bytes.Equal(rest[:p], m.prefix) {
					break
				}
				if m.bare {
					if rest[p] != '\n' {
						break
					}
					lineNo++
					lastRaw = rest[:p]
					lastLine = lastRaw[m.start:]
					inOpcodes = true
					rest = rest[p+1:]
					bi++
					continue
				}
				end := p
				var n uint64
				for ; end < len(rest); end++ {
					d := rest[end] - '0'
					if d > 9 {
						break
					}
					n = n*10 + uint64(d)
				}
				if end == p || end-p > 19 || end == len(rest) || rest[end] != '\n' {
					break
				}
				lineNo++
				lastRaw = rest[:end]
				lastLine = lastRaw[m.start:]
				if k := m.qpKey; !inOpcodes && m.qpKnown && qp.present&(1<<k) == 0 {
					// qpValue's common case, inline.
					qp.values[k] = n
					qp.present |= 1 << k
				} else {
					s.qpValue(qp, &ops, opStart, inOpcodes, m.key, m.qpKey, m.qpKnown, m.isOther, n, lineNo)
				}
				rest = rest[end+1:]
				bi++
			}
			if len(rest) == 0 {
				break
			}
		}
		lineNo++
		nl := bytes.IndexByte(rest, '\n')
		raw := rest[:nl]
		rest = rest[nl+1:]
		line, key, val, hasVal := cutLine(raw)
		if memo && qp != nil && bi < memoLines {
			memos[bi].learn(raw, line, key, val)
		}
		bi++
		if len(line) == 0 {
			// An empty line ends a QP block.
			qp, inOpcodes = nil, false
			continue
		}
		lastLine, lastRaw = line, raw
		column0 := raw[0] != ' ' && raw[0] != '\t'

		// Bare header at column 0: starts a section and closes any QP.
		if column0 && !hasVal && line[len(line)-1] == ':' {
			qp, inOpcodes = nil, false
			switch {
			case string(line) == "Instance:":
				sec = secInstance
			case string(line) == headerDevice:
				sec = secDevice
			case string(line) == headerQPs:
				sec = secQPs
				sawQPs = true
			case bytes.HasPrefix(line, []byte("LIF")):
				sec = secLIF
			default:
				sec = secOther
			}
			continue
		}
		if column0 && (hasVal && string(key) == writeCount || !hasVal && bytes.HasPrefix(line, []byte(writeCount+":"))) {
			// `Write count : N`, or `Write count: N` in older servers.
			if !hasVal {
				val = bytes.TrimSpace(line[len(writeCount)+1:])
			}
			n, ok := parseUint(val)
			if !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("Write count %q is not an unsigned 64-bit integer", val)})
				continue
			}
			if s.HasWriteCount {
				s.duplicate(lineNo, writeCount)
			}
			s.WriteCount, s.HasWriteCount = n, true
			continue
		}

		switch sec {
		case secInstance:
			if !hasVal {
				continue
			}
			switch string(key) {
			case "socket":
				s.Socket = string(val)
			case "backend":
				s.Backend = string(val)
			case "pci":
				s.PCI = string(val)
			case "mac":
				s.MAC = string(val)
			case "connection":
				s.Connection, s.HasConnection = string(val), true
			}
		case secDevice:
			if !hasVal {
				continue
			}
			if _, ok := lifName(key); ok {
				s.addLIF(&sc, key, val, lineNo)
				continue
			}
			k, known := lookupDeviceKey(key)
			if !known {
				continue // a key a newer server added; not published
			}
			n, ok := parseUint(val)
			if !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("device counter %s: %q is not an unsigned 64-bit integer", key, val)})
				continue
			}
			if !s.Device.set(k, n) {
				s.duplicate(lineNo, "device counter "+string(key))
			}
		case secQPs:
			h, isHeader, ok := qpHeader(line)
			if isHeader && !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("QP header %q: the handle is not a decimal uint32; block ignored", line)})
				qp, inOpcodes = nil, false
				continue
			}
			if isHeader {
				inOpcodes = false
				if sc.seenQP(h) {
					s.Problems = append(s.Problems, &LineError{lineNo, "QP " + strconv.FormatUint(uint64(h), 10) + " printed twice; the second block is ignored"})
					qp = nil
					continue
				}
				s.QPs = append(s.QPs, QP{Handle: h})
				qp = &s.QPs[len(s.QPs)-1]
				bi = 0
				opStart = len(ops)
				continue
			}
			if qp == nil {
				continue // `(no QPs created yet)`, or lines of an ignored block
			}
			if !hasVal {
				if string(line) == wqesByOpcode {
					inOpcodes = true
					continue
				}
				if inOpcodes {
					// Older servers print `NAME: N` for 20- and 21-character names.
					if i := bytes.LastIndexByte(line, ':'); i > 0 {
						key, val, hasVal = bytes.TrimSpace(line[:i]), bytes.TrimSpace(line[i+1:]), true
					}
				}
				if !hasVal {
					continue
				}
			}
			n, ok := parseUint(val)
			if !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("QP %d %s: %q is not an unsigned 64-bit integer", qp.Handle, key, val)})
				continue
			}
			k, known := lookupQPKey(key)
			s.qpValue(qp, &ops, opStart, inOpcodes, key, k, known, string(key) == otherOpcodes, n, lineNo)
		case secLIF:
			if hasVal {
				s.addLIF(&sc, key, val, lineNo)
			}
		}
	}

	if !sawQPs {
		return incomplete("no \"" + headerQPs + "\" header")
	}
	// A whole file ends right after the QP header (or the old no-QPs line)
	// or with an empty line after its last block or trailing section.
	endsBlank := len(data) >= 2 && data[len(data)-2] == '\n'
	// The header counts only at column 0, and the old no-QPs line only
	// right under it (no QP opened): the same words inside a QP block are
	// not an end.
	endsHeader := string(lastRaw) == headerQPs ||
		(string(lastLine) == noQPsLine && sec == secQPs && len(s.QPs) == 0)
	if !endsBlank && !endsHeader {
		return incomplete("file does not end with an empty line (cut inside a block)")
	}
	for _, group := range requiredDevice {
		found := false
		for _, k := range group {
			if _, ok := s.Device.Get(k); ok {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("device counter %s missing: not a stats file of a known server format", group[0])
		}
	}
	return nil
}

// qpValue applies the `key : n` line lineNo of the block of qp: an opcode
// count when inOpcodes (isOther: the `(other opcodes)` line), else the
// counter k when known. ops backs the opcode lists, and the block's start
// at opStart. A key printed twice in the block is reported; its last value
// is kept.
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

// setCounter sets the counter named key among (*cs)[from:], appending it
// (named by name(key)) when absent; false when it was already there. The
// lists are short (at most 19 opcodes of a QP, about 74 LIF counters), so a
// linear search is cheaper than a map.
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

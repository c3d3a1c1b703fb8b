// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"bytes"
	"unicode/utf8"
)

// Words of the stats format (README.md §3).
const (
	headerDevice = "Device Statistics:"
	headerQPs    = "Per-QP Statistics:"
	noQPsLine    = "(no QPs created yet)"
	otherOpcodes = "(other opcodes)"
	wqesByOpcode = "WQEs by opcode:"
	writeCount   = "Write count"
)

// cutLine applies the line rule of README.md §3.1 to one line without its
// '\n': line is raw stripped as bytes.TrimSpace would, key and val the halves
// at the separator (hasVal). ASCII space is stripped by hand: this is the
// parser's inner loop (FuzzCutLine compares the two).
func cutLine(raw []byte) (line, key, val []byte, hasVal bool) {
	start, end := 0, len(raw)
	for start < end && asciiSpace[raw[start]] {
		start++
	}
	for end > start && asciiSpace[raw[end-1]] {
		end--
	}
	if start < end && (raw[start] >= utf8.RuneSelf || raw[end-1] >= utf8.RuneSelf) {
		line = bytes.TrimSpace(raw)
	} else {
		line = raw[start:end]
	}
	for off := 0; ; {
		j := bytes.IndexByte(line[off:], ':')
		if j < 0 {
			break
		}
		j += off
		if j > 0 && line[j-1] == ' ' && j+1 < len(line) && line[j+1] == ' ' {
			return line, trimRight(line[:j-1]), trimLeft(line[j+2:]), true
		}
		off = j + 1
	}
	if n := len(line); n >= 2 && line[n-2] == ' ' && line[n-1] == ':' {
		return line, trimRight(line[:n-2]), nil, true
	}
	return line, nil, nil, false
}

var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// trimRight strips white space at the end of b (its start is not space).
func trimRight(b []byte) []byte {
	end := len(b)
	for end > 0 && asciiSpace[b[end-1]] {
		end--
	}
	if end > 0 && b[end-1] >= utf8.RuneSelf {
		return bytes.TrimSpace(b[:end])
	}
	return b[:end]
}

// trimLeft strips white space at the start of b (its end is not space).
func trimLeft(b []byte) []byte {
	start := 0
	for start < len(b) && asciiSpace[b[start]] {
		start++
	}
	if start < len(b) && b[start] >= utf8.RuneSelf {
		return bytes.TrimSpace(b[start:])
	}
	return b[start:]
}

// memoLines holds a QP block's counters, opcode header, opcode lines and
// older servers' extra counters.
const memoLines = 32

// lineMemo remembers how a QP block's line was cut: every block prints its
// counters in the same order and padding, so the same line of the next block
// is cut by one compare (FuzzParseStats compares parses without the memo).
type lineMemo struct {
	prefix []byte // the earlier line up to its value; nil when none
	key    []byte
	start  int // where its stripped line starts in it
	// What the parser looks up about the key, kept with it.
	indented bool
	qpKey    QPKey
	qpKnown  bool
	isOther  bool
	// bare: prefix is the whole `WQEs by opcode:` line, which has no value.
	bare bool
}

// learn remembers the cut of raw when it has a value or is the `WQEs by
// opcode:` line; otherwise it forgets.
func (m *lineMemo) learn(raw, line, key, val []byte) {
	*m = lineMemo{}
	if len(val) == 0 {
		if string(line) == wqesByOpcode && key == nil {
			m.prefix, m.start, m.bare = raw, cap(raw)-cap(line), true
			m.indented = raw[0] == ' ' || raw[0] == '\t'
		}
		return
	}
	vs := cap(raw) - cap(val) // the value's offset in raw
	m.prefix, m.key, m.start = raw[:vs], key, cap(raw)-cap(line)
	m.indented = raw[0] == ' ' || raw[0] == '\t'
	m.qpKey, m.qpKnown = lookupQPKey(key)
	m.isOther = string(key) == otherOpcodes
}

// qpHeader recognises a `QP <handle>:` line (isHeader) and parses its
// handle, a decimal uint32 (ok).
func qpHeader(line []byte) (handle uint32, isHeader, ok bool) {
	if len(line) < 4 || line[0] != 'Q' || line[1] != 'P' || line[2] != ' ' || line[len(line)-1] != ':' {
		return 0, false, false
	}
	n, ok := parseUint(bytes.TrimSpace(line[3 : len(line)-1]))
	if !ok || n > 1<<32-1 {
		return 0, true, false
	}
	return uint32(n), true, true
}

// parseUint parses an unsigned decimal up to 2^64-1, without sign or separators.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	if len(b) < 20 {
		// At most 19 digits cannot overflow: 10^19-1 < 2^64-1.
		for _, c := range b {
			d := c - '0'
			if d > 9 {
				return 0, false
			}
			n = n*10 + uint64(d)
		}
		return n, true
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

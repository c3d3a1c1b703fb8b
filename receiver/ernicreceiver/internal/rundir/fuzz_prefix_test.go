// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// legalEnd tells whether a file may end after p: p ends with an empty line,
// or its last non-blank line is the column-0 `Per-QP Statistics:` header, or
// the old `(no QPs created yet)` line right after that header. A blank line
// (only whitespace: the line rule strips it to nothing) holds no data, so
// blank lines after the header change nothing; but only a truly empty line
// ends a file after a QP block or a section.
func legalEnd(p []byte) bool {
	if len(p) == 0 || p[len(p)-1] != '\n' {
		return false
	}
	lines := strings.Split(string(p[:len(p)-1]), "\n")
	if lines[len(lines)-1] == "" {
		return true
	}
	var nonBlank []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			nonBlank = append(nonBlank, l)
		}
	}
	switch n := len(nonBlank); {
	case n == 0:
		return false
	case isQPHeaderLine(nonBlank[n-1]):
		return true
	case strings.TrimSpace(nonBlank[n-1]) == noQPsLine && n >= 2 && isQPHeaderLine(nonBlank[n-2]):
		return true
	}
	return false
}

// isQPHeaderLine: the line is the `Per-QP Statistics:` section header, at
// column 0 (trailing blanks stripped by the line rule).
func isQPHeaderLine(line string) bool {
	return line != "" && line[0] != ' ' && line[0] != '\t' && strings.TrimSpace(line) == headerQPs
}

func tail(p []byte) string {
	if len(p) > 60 {
		return "…" + string(p[len(p)-60:])
	}
	return string(p)
}

// prefixDiffers returns what in the parse s of an accepted prefix differs
// from the parse full of the whole file, or "". rest is the part of the
// file after the cut. wholeBlocks: the cut is at a legal end point, where
// every QP block is closed, so each of s's blocks must equal the whole
// file's; otherwise each value s has must be the whole file's, unless the
// file prints the key again after the cut.
func prefixDiffers(s, full *Stats, rest []byte, wholeBlocks bool) string {
	later := laterKeys(rest)
	if len(s.QPs) > len(full.QPs) {
		return strconv.Itoa(len(s.QPs)) + " QP blocks, the whole file has " + strconv.Itoa(len(full.QPs))
	}
	for i := range s.QPs {
		q, fq := &s.QPs[i], &full.QPs[i]
		if wholeBlocks && !reflect.DeepEqual(*q, *fq) || !wholeBlocks && !qpValuesIn(q, fq, later) {
			return "QP block " + strconv.Itoa(i) + " is cut or differs: " + qpString(q) + ", whole file: " + qpString(fq)
		}
	}
	for k := range NumDeviceKeys {
		v, ok := s.Device.Get(k)
		if !ok {
			continue
		}
		fv, fok := full.Device.Get(k)
		if !fok {
			return "device counter " + k.String() + " is not in the whole file's parse"
		}
		if v != fv && !later[k.String()] {
			return "device counter " + k.String() + " is " + strconv.FormatUint(v, 10) + ", the whole file's " + strconv.FormatUint(fv, 10)
		}
	}
	if s.HasWriteCount {
		if !full.HasWriteCount {
			return "write count not in the whole file's parse"
		}
		if s.WriteCount != full.WriteCount && !later[writeCount] {
			return "write count is " + strconv.FormatUint(s.WriteCount, 10) + ", the whole file's " + strconv.FormatUint(full.WriteCount, 10)
		}
	}
	if len(s.LIF) > len(full.LIF) {
		return "more LIF counters than the whole file"
	}
	for i, c := range s.LIF {
		fc := full.LIF[i]
		if c.Name != fc.Name {
			return "LIF counter " + strconv.Itoa(i) + " is " + c.Name + ", the whole file's " + fc.Name
		}
		if c.Value != fc.Value && !later[c.Name] {
			return "LIF counter " + c.Name + " is " + strconv.FormatUint(c.Value, 10) + ", the whole file's " + strconv.FormatUint(fc.Value, 10)
		}
	}
	return ""
}

// qpValuesIn tells whether every value of q is fq's (same handle), except
// keys printed again later.
func qpValuesIn(q, fq *QP, later map[string]bool) bool {
	if q.Handle != fq.Handle {
		return false
	}
	for k := range NumQPKeys {
		v, ok := q.Get(k)
		fv, fok := fq.Get(k)
		if ok && (!fok || v != fv && !later[k.String()]) {
			return false
		}
	}
	for _, c := range q.Opcodes {
		i := slices.IndexFunc(fq.Opcodes, func(fc Counter) bool { return fc.Name == c.Name })
		if i < 0 || fq.Opcodes[i].Value != c.Value && !later[c.Name] {
			return false
		}
	}
	return !q.HasOther || fq.HasOther && (q.Other == fq.Other || later[otherOpcodes])
}

// laterKeys returns the keys of the `key : value` lines of rest (stats-file
// line rule), and writeCount when rest has a column-0 `Write count` line.
func laterKeys(rest []byte) map[string]bool {
	keys := map[string]bool{}
	for line := range strings.Lines(string(rest)) {
		if strings.HasPrefix(line, writeCount) {
			keys[writeCount] = true
		}
		l := bytes.TrimSpace([]byte(line))
		if key, _, ok := splitLineRef(l); ok {
			keys[string(key)] = true
		} else if i := bytes.LastIndexByte(l, ':'); i > 0 {
			keys[string(bytes.TrimSpace(l[:i]))] = true // `NAME: N` opcode lines
		}
	}
	return keys
}

func qpString(q *QP) string {
	var b strings.Builder
	b.WriteString("QP " + strconv.FormatUint(uint64(q.Handle), 10) + " {")
	for k := range NumQPKeys {
		if v, ok := q.Get(k); ok {
			b.WriteString(" " + k.String() + "=" + strconv.FormatUint(v, 10))
		}
	}
	for _, c := range q.Opcodes {
		b.WriteString(" " + c.Name + "=" + strconv.FormatUint(c.Value, 10))
	}
	if q.HasOther {
		b.WriteString(" other=" + strconv.FormatUint(q.Other, 10))
	}
	b.WriteString(" }")
	return b.String()
}

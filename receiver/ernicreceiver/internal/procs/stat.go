// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package procs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// maxStatBytes bounds a <pid>/stat file, well over its 52 numbers and name.
const maxStatBytes = 4096

// stat is what the receiver uses of /proc/<pid>/stat (proc_pid_stat(5)).
type stat struct {
	// comm is field 2 without its parentheses (it may hold both spaces and
	// parentheses); it aliases the file's buffer.
	comm []byte
	// state is field 3, one letter: R, S, D, Z (zombie), X (dead), ...
	state byte
	// startTicks is field 22, starttime: clock ticks (USER_HZ) after boot.
	startTicks uint64
}

var errStatFormat = errors.New("unexpected format")

// parseStat parses fields 2, 3 and 22. comm runs to the last ")", as the
// kernel's readers take it; a starttime at the very end is a cut file.
func parseStat(data []byte) (stat, error) {
	l := bytes.IndexByte(data, '(')
	r := bytes.LastIndexByte(data, ')')
	if l < 0 || r < l || r+2 > len(data) || data[r+1] != ' ' {
		return stat{}, fmt.Errorf("%w: no command name in parentheses", errStatFormat)
	}
	st := stat{comm: data[l+1 : r]}
	rest := data[r+2:]
	for field := 3; field <= 22; field++ {
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		tok := bytes.TrimRight(rest[:end], "\n")
		switch field {
		case 3:
			if len(tok) != 1 || !('A' <= tok[0] && tok[0] <= 'Z' || 'a' <= tok[0] && tok[0] <= 'z') {
				return stat{}, fmt.Errorf("%w: state %q", errStatFormat, tok)
			}
			st.state = tok[0]
		case 22:
			n, ok := parseUint(tok)
			if !ok {
				return stat{}, fmt.Errorf("%w: starttime %q", errStatFormat, tok)
			}
			if end == len(rest) && len(tok) == end {
				// Nothing after it: the file was cut, maybe within starttime.
				return stat{}, fmt.Errorf("%w: starttime %q at the end of a line cut short", errStatFormat, tok)
			}
			st.startTicks = n
			return st, nil
		}
		if end == len(rest) {
			break
		}
		rest = rest[end+1:]
	}
	return stat{}, fmt.Errorf("%w: fewer than 22 fields", errStatFormat)
}

// parseUint parses a decimal uint64 without allocating.
func parseUint(tok []byte) (uint64, bool) {
	if len(tok) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range tok {
		d := uint64(c - '0')
		if d > 9 || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

// Native Go fuzz targets of the two run-directory parsers. They check
// properties, not only the absence of panics:
//
// FuzzParseStats, on every input:
//   - parsing is deterministic: two parses give DeepEqual results and equal
//     errors, and exactly one of result and error is set;
//   - the result does not alias the input (Reader reuses its buffer between
//     reads): scribbling over the input after the parse changes nothing;
//   - an input that does not end with a newline is ErrIncomplete.
//
// and, on every input that parses (a "whole file" F), for every proper
// prefix P of F (checkStatsPrefixes):
//   - P is rejected with an error wrapping ErrIncomplete unless it ends at a
//     legal end point of a file: right after an empty line, right after the
//     column-0 `Per-QP Statistics:` line, or right after the very old
//     server's `(no QPs created yet)` line that directly follows that header
//     (ParseStats' documented rule; blank lines, which the line rule strips
//     to nothing, may follow either). A cut anywhere else, inside a line or
//     after any other non-empty line, is a torn read. A prefix at a legal end
//     point may parse: the reader and the scraper catch those cuts by other
//     means (a size that is a multiple of StdioBuffer is re-read; a file with
//     fewer QP blocks or LIF counters than the last one is rejected). The
//     header counts only at column 0 and the no-QPs line only right under
//     it (finding F1; inputs lenient-* are its regression tests);
//   - when P parses, nothing in it differs from F: its QP blocks are the
//     first blocks of F, each whole and equal to F's block of the same
//     handle; every device counter, LIF counter and the write count it holds
//     are in F with the same value. The one exception is a key that F prints
//     again after the cut (a repeated `Device Statistics:` or LIF section, a
//     second `Write count` line):
//     the parser keeps the last value of a duplicated key, so P legitimately
//     holds the earlier line's value, itself a whole line of F. A QP key has
//     no such exception: at a legal end point the block is closed, and a
//     later block with the same handle is ignored.
//
// FuzzParseManifest, on every input:
//   - parsing is deterministic and does not alias the input;
//   - the ids of the result are positive and unique, pids are not negative,
//     and StatsFile is the plain name <id>.stats;
//
// and, on every input that parses, every proper prefix that is shorter than
// the document without its trailing whitespace fails with ErrIncomplete.
//
// `make test` runs each target for a bounded time; `make fuzz` runs them
// longer. Inputs that failed are kept under testdata/fuzz/<FuzzName>/ and
// replayed by every `go test`.

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// maxPrefixCheck bounds the inputs whose every prefix is parsed (quadratic
// work); larger inputs get the per-input properties only.
const maxPrefixCheck = 8 << 10

func FuzzParseStats(f *testing.F) {
	addTestdataSeeds(f)
	variants := statsVariants(f)
	for _, name := range slices.Sorted(maps.Keys(variants)) {
		f.Add([]byte(variants[name]))
	}
	edges := memoEdges(f)
	for _, name := range slices.Sorted(maps.Keys(edges)) {
		f.Add([]byte(edges[name][0]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStats(t, data)
		// Most mutations lose the final newline, which ParseStats rejects
		// first; the same input with one gets to the rest of the parser.
		if len(data) == 0 || data[len(data)-1] != '\n' {
			checkStats(t, append(bytes.Clone(data), '\n'))
		}
	})
}

// checkStats checks the properties of every input, and the prefix
// properties of an input that parses.
func checkStats(t *testing.T, input []byte) {
	t.Helper()
	data := bytes.Clone(input)
	s1, err1 := ParseStats(data)
	if !bytes.Equal(data, input) {
		t.Fatal("ParseStats modified its input")
	}
	// The result must not alias the input: the Reader reuses its buffer.
	for i := range data {
		data[i] ^= 0x55
	}
	s2, err2 := ParseStats(input)
	if (s1 == nil) == (err1 == nil) {
		t.Fatalf("ParseStats returned %v and error %v: want exactly one", s1, err1)
	}
	if !sameError(err1, err2) {
		t.Fatalf("not deterministic: error %v, then %v", err1, err2)
	}
	if !reflect.DeepEqual(s1, s2) {
		t.Fatalf("not deterministic (or the result aliases the input):\n%+v\n%+v", s1, s2)
	}
	// Parsing into a Stats that held earlier inputs (the scraper reuses
	// them) gives the same snapshot.
	err3 := ParseStatsInto(reused, input)
	if !sameError(err1, err3) {
		t.Fatalf("ParseStatsInto a reused Stats: error %v, ParseStats: %v", err3, err1)
	}
	if err1 == nil && !reflect.DeepEqual(snapshot(s1), snapshot(reused)) {
		t.Fatalf("ParseStatsInto a reused Stats differs from ParseStats:\n%+v\n%+v", snapshot(reused), snapshot(s1))
	}
	// The QP-line memo changes nothing.
	plain := &Stats{}
	err4 := parseStats(plain, input, false)
	if !sameError(err1, err4) {
		t.Fatalf("without the line memo: error %v, with it: %v", err4, err1)
	}
	if err1 == nil && !reflect.DeepEqual(snapshot(s1), snapshot(plain)) {
		t.Fatalf("the line memo changes the snapshot:\nwith:    %+v\nwithout: %+v", snapshot(s1), snapshot(plain))
	}
	if (len(input) == 0 || input[len(input)-1] != '\n') && !errors.Is(err1, ErrIncomplete) {
		t.Fatalf("input without a final newline: error %v, want ErrIncomplete", err1)
	}
	if err1 == nil && len(input) <= maxPrefixCheck {
		checkStatsPrefixes(t, input, s1)
	}
}

// sameError: both nil, or the same message and the same ErrIncomplete-ness.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error() && errors.Is(a, ErrIncomplete) == errors.Is(b, ErrIncomplete)
}

// reused is the Stats checkStats parses every input into, after the inputs
// before it.
var reused = &Stats{}

// snapshot returns the exported content of s, empty lists as nil.
func snapshot(s *Stats) Stats {
	c := *s
	c.scratch = scratch{}
	if len(c.QPs) == 0 {
		c.QPs = nil
	}
	if len(c.LIF) == 0 {
		c.LIF = nil
	}
	return c
}

// checkStatsPrefixes checks every proper prefix of the whole file data,
// whose parse is full (see the comment at the top of the file).
func checkStatsPrefixes(t *testing.T, data []byte, full *Stats) {
	t.Helper()
	for n := range len(data) {
		p := data[:n]
		s, err := ParseStats(p)
		whole := legalEnd(p)
		if !whole {
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("prefix of %d bytes, cut inside a line or after a non-empty line, ending %q: error %v, want ErrIncomplete",
					n, tail(p), err)
			}
			continue
		}
		if err != nil {
			continue
		}
		if msg := prefixDiffers(s, full, data[n:], true); msg != "" {
			t.Fatalf("prefix of %d bytes, ending %q, accepted: %s", n, tail(p), msg)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	addTestdataSeeds(f)
	for _, s := range manifestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, orig []byte) {
		data := bytes.Clone(orig)
		m1, err1 := ParseManifest(data)
		if !bytes.Equal(data, orig) {
			t.Fatal("ParseManifest modified its input")
		}
		for i := range data {
			data[i] ^= 0x55
		}
		m2, err2 := ParseManifest(orig)
		if (m1 == nil) == (err1 == nil) {
			t.Fatalf("ParseManifest returned %v and error %v: want exactly one", m1, err1)
		}
		if !sameError(err1, err2) {
			t.Fatalf("not deterministic: error %v, then %v", err1, err2)
		}
		if !reflect.DeepEqual(m1, m2) {
			t.Fatalf("not deterministic (or the result aliases the input):\n%+v\n%+v", m1, m2)
		}
		if err1 != nil {
			return
		}
		seen := map[int64]bool{}
		for _, inst := range m1.Instances {
			if inst.ID <= 0 || seen[inst.ID] {
				t.Fatalf("id %d: ids must be positive and unique (%+v)", inst.ID, m1.Instances)
			}
			seen[inst.ID] = true
			if inst.PID < 0 || (inst.VM != nil && inst.VM.PID < 0) {
				t.Fatalf("id %d: negative pid in %+v", inst.ID, inst)
			}
			if name := inst.StatsFile(); name != strconv.FormatInt(inst.ID, 10)+".stats" || strings.ContainsAny(name, `/\`) {
				t.Fatalf("id %d: stats file %q", inst.ID, name)
			}
		}
		if len(orig) > maxPrefixCheck {
			return
		}
		// A whole document: every proper prefix, short of trailing
		// whitespace, is what a reader racing the writer sees.
		end := len(bytes.TrimRight(orig, " \t\r\n"))
		for n := range end {
			if _, err := ParseManifest(orig[:n]); !errors.Is(err, ErrIncomplete) {
				t.Fatalf("prefix of %d bytes %q of a valid manifest: error %v, want ErrIncomplete", n, tail(orig[:n]), err)
			}
		}
	})
}

// splitLineRef is the line rule of rundir/README.md §3.1 written plainly, as the parser
// had it before cutLine: split a bytes.TrimSpace-stripped line at the first
// " : " (the first ':' with a space on each side) and strip both halves; a
// line ending in " :" has an empty value.
func splitLineRef(line []byte) (key, val []byte, ok bool) {
	for off := 0; ; {
		j := bytes.IndexByte(line[off:], ':')
		if j < 0 {
			break
		}
		j += off
		if j > 0 && line[j-1] == ' ' && j+1 < len(line) && line[j+1] == ' ' {
			return bytes.TrimSpace(line[:j-1]), bytes.TrimSpace(line[j+2:]), true
		}
		off = j + 1
	}
	if bytes.HasSuffix(line, []byte(" :")) {
		return bytes.TrimSpace(line[:len(line)-2]), nil, true
	}
	return nil, nil, false
}

// FuzzCutLine checks the parser's hand-made line splitting (ASCII fast path,
// Unicode fallback) against splitLineRef on bytes.TrimSpace, for any line.
func FuzzCutLine(f *testing.F) {
	for _, seed := range []string{
		"", " ", "  doorbell_send  : 512", "Write count : 3071", "a : b : c",
		"x:y : z", "key :", "key : ", " : ", "\u00a0key\u00a0 :\u00a0 val\u2003",
		"\tLIF Statistics:", "QP 9:", "a\x85 : \x85b", "\xc2 : \xa0", "k\u3000\t : \v5\f",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.IndexByte(raw, '\n') >= 0 {
			return // one line
		}
		line, key, val, ok := cutLine(raw)
		wantLine := bytes.TrimSpace(raw)
		wantKey, wantVal, wantOK := splitLineRef(wantLine)
		if !bytes.Equal(line, wantLine) || !bytes.Equal(key, wantKey) || !bytes.Equal(val, wantVal) || ok != wantOK {
			t.Fatalf("cutLine(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", raw, line, key, val, ok, wantLine, wantKey, wantVal, wantOK)
		}
	})
}

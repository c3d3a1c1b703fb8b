// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// The label guard: every string of the run directory that becomes an
// attribute value is made valid UTF-8 and cut to max_label_length, and
// each value changed counts in ernic.labels.truncated.

// labelFaults gathers the values with invalid UTF-8 of one file.
type labelFaults struct {
	n     int
	first string // the first such value, raw
}

// cappedCopy returns a copy of inst whose strings capInstanceLabels may cut.
func cappedCopy(inst *rundir.Instance) *rundir.Instance {
	c := *inst
	if inst.VM != nil {
		vm := *inst.VM
		c.VM = &vm
	}
	return &c
}

// capInstanceLabels guards the manifest strings of inst that become
// attribute values (guardLabel); it returns how many it changed. The
// manifest's JSON decoder already replaced invalid UTF-8.
func capInstanceLabels(inst *rundir.Instance, max int) int {
	n := guardLabel(&inst.Role, max, nil) + guardLabel(&inst.MAC, max, nil)
	if inst.VM != nil {
		n += guardLabel(&inst.VM.Name, max, nil)
	}
	return n
}

// capStatsLabels guards the stats-file strings of s that become attribute
// values (connection state, LIF counter and opcode names; guardLabel); it
// returns how many it changed, and gathers those with invalid UTF-8 in
// bad.
func capStatsLabels(s *rundir.Stats, max int, bad *labelFaults) int {
	n := guardLabel(&s.Connection, max, bad)
	for i := range s.LIF {
		n += guardLabel(&s.LIF[i].Name, max, bad)
	}
	for q := range s.QPs {
		for i := range s.QPs[q].Opcodes {
			n += guardLabel(&s.QPs[q].Opcodes[i].Name, max, bad)
		}
	}
	return n
}

// guardLabel makes *v a valid attribute value; 1 when it changed it. A
// value with invalid UTF-8 (which the Prometheus endpoint refuses and
// remote write would store raw) gets U+FFFD for each bad sequence and ends
// with hashSuffix of the raw value, so that two values that differ only in
// bad bytes stay two series; it is added to bad when not nil. Then a value
// longer than limit bytes is cut (capLabel).
func guardLabel(v *string, limit int, bad *labelFaults) int {
	changed := 0
	if !utf8.ValidString(*v) {
		if bad != nil {
			if bad.n == 0 {
				bad.first = *v
			}
			bad.n++
		}
		*v = strings.ToValidUTF8(*v, "\uFFFD") + hashSuffix(*v)
		changed = 1
	}
	return max(changed, capLabel(v, limit))
}

// hashSuffix returns "~" and 8 hex digits of the FNV-1a hash of v.
func hashSuffix(v string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(v))
	return fmt.Sprintf("~%08x", h.Sum32())
}

// capLabel cuts *v to at most max bytes; 1 when it cut. A cut value keeps
// its first bytes (up to a UTF-8 boundary) and ends with hashSuffix of the
// whole value, so that two values that share their first max bytes (two
// LIF counters, two opcodes) stay two series instead of becoming one.
func capLabel(v *string, max int) int {
	if len(*v) <= max {
		return 0
	}
	suffix := hashSuffix(*v)
	cut := max - len(suffix)
	for cut > 0 && !utf8.RuneStart((*v)[cut]) {
		cut--
	}
	*v = (*v)[:cut] + suffix
	return 1
}

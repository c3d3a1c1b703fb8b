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

// The label guard: every run-directory string that becomes an attribute
// value is made valid UTF-8 and cut to max_label_length.

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

// capInstanceLabels guards inst's strings (JSON already fixed their UTF-8).
func capInstanceLabels(inst *rundir.Instance, max int) int {
	n := guardLabel(&inst.Role, max, nil) + guardLabel(&inst.MAC, max, nil)
	if inst.VM != nil {
		n += guardLabel(&inst.VM.Name, max, nil)
	}
	return n
}

// capStatsLabels guards s's strings, gathering invalid UTF-8 in bad.
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

// guardLabel makes *v a valid attribute value; 1 when changed. Invalid UTF-8
// (refused by the Prometheus endpoint) becomes U+FFFD plus a hash of the raw
// value, so values that differ only in bad bytes stay distinct.
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

// capLabel cuts *v to max bytes at a UTF-8 boundary, ending with a hash of
// the whole value so that values sharing a prefix stay distinct; 1 when cut.
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

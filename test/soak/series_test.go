// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// ---------------------------------------------------------------------------
// A series' samples against what the simulator wrote.

// attributeDecreases goes through the decreases between the raw samples of
// the series m of family fam: one with a real restart of its instance (or a
// qp-reuse of its QP) in between is right, the rest (bad) are false
// resets; nearFaults counts those from a file over max_file_bytes or
// across a removal of the run directory, where the receiver once lost
// them.
func attributeDecreases(t *testing.T, ctx context.Context, prom *harness.Prometheus, run *chaosRun, m model.Metric, fam, rng string, end time.Time) (bad, nearFaults int) {
	t.Helper()
	var sel []string
	for k, v := range m {
		sel = append(sel, fmt.Sprintf("%s=%q", k, string(v)))
	}
	sort.Strings(sel)
	_, mat, err := prom.Query(ctx, fmt.Sprintf("%s{%s}[%s]", fam, strings.Join(sel, ","), rng), end)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.Atoi(string(m["ernic_id"]))
	qp := string(m["qp"])
	for _, ss := range mat {
		for i := 1; i < len(ss.Values); i++ {
			a, b := ss.Values[i-1], ss.Values[i]
			ta, tb := a.Timestamp.Time(), b.Timestamp.Time()
			switch {
			case b.Value >= a.Value:
			case run.restartedBetween(id, ta, tb):
			case qp != "" && run.acrossDrop(id, ta, tb):
			case run.inOversized(id, ta) || run.acrossRecreate(ta, tb):
				bad++
				nearFaults++
			default:
				bad++
			}
		}
	}
	return bad, nearFaults
}

// checkSeries checks the raw samples of one sampled series: each value was
// in a complete write before the sample (2s of slack: the scrape's
// timestamp is taken before the file is read), and a decrease is only from
// an earlier process or QP epoch to a later one.
func checkSeries(sum *summary, run *chaosRun, k seriesKey, values []model.SamplePair) {
	// The sample's timestamp is its scrape's start; the file is read a bit
	// later, up to seconds on a loaded machine.
	const slack = 5 * time.Second
	written := run.index[k]
	if written == nil {
		sum.WrongValues += len(values)
		sum.WrongList = append(sum.WrongList, fmt.Sprintf("%s: %d samples of a series the simulator never wrote", k, len(values)))
		return
	}
	sum.SampledSeries++
	var prevLo, prevHi int64 = -1, -1
	var prevV float64
	var prevAt time.Time
	for i, sp := range values {
		sum.SamplesChecked++
		at := sp.Timestamp.Time()
		v := float64(sp.Value)
		lo, hi := int64(math.MaxInt64), int64(-1)
		for _, o := range written[v] {
			if !o.first.After(at.Add(slack)) {
				lo, hi = min(lo, o.proc), max(hi, o.proc)
			}
		}
		if hi < 0 {
			line := fmt.Sprintf("%s at %s = %v: not in any complete write before then%s", k, at.Format("15:04:05.000"), v, nearby(written, v))
			// The faults where the receiver once published such values.
			switch {
			case k.family == famQPCount && run.tornQPBoundary(k.id, at, v):
				line += ": the QP blocks of a file cut at a QP block boundary (torn-qp-boundary)"
			case run.inOversized(k.id, at) && isBogus(written, v):
				line += ": the content of a file over max_file_bytes (oversized)"
			}
			sum.WrongValues++
			if len(sum.WrongList) < 200 {
				sum.WrongList = append(sum.WrongList, line)
			}
		}
		if i > 0 && v < prevV {
			sum.SampleDecreases++
			if hi < 0 || prevLo < 0 || hi <= prevLo {
				line := fmt.Sprintf("raw %s: %v at %s -> %v at %s within one process (processes %x..%x -> %x..%x)",
					k, prevV, prevAt.Format("15:04:05.000"), v, at.Format("15:04:05.000"), prevLo, prevHi, lo, hi)
				if run.acrossRecreate(prevAt, at) {
					line += " (across a removal of the run directory)"
				}
				sum.FalseDecreases++
				if len(sum.FalseResetList) < 200 {
					sum.FalseResetList = append(sum.FalseResetList, line)
				}
			}
		}
		prevV, prevLo, prevHi, prevAt = v, lo, hi, at
	}
}

// nearby describes the written values closest to v.
func nearby(written map[float64][]origin, v float64) string {
	var below, above float64 = math.Inf(-1), math.Inf(1)
	for w := range written {
		if w < v && w > below {
			below = w
		}
		if w > v && w < above {
			above = w
		}
	}
	return fmt.Sprintf(" (written values around it: %v and %v)", below, above)
}

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("... and %d more", len(s)-n))
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// loss is what the samples check found, over every regular host.
type loss struct {
	samples, lost, differ, extra int
	scrapes                      int // of ernic_instances, the fewest a host had
}

// checkNoLoss compares, for every regular host, every sample the reference
// holds from `from` to `to` with what the querier returns (deduplicated):
// each must be there with its value. The reference got the very samples of
// the same collectors through the same pipeline and was never stopped.
// Four hosts at a time; each host is retried for 30 s, for the samples
// still in flight at `to`.
func checkNoLoss(ctx context.Context, t *testing.T, b *backend, f *fleet, from, to time.Time) loss {
	t.Helper()
	var mu sync.Mutex
	l := loss{scrapes: -1}
	window := to.Sub(from)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, h := range f.regular() {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			// Every series of the host: its ernic series and its delivery telemetry.
			sel := fmt.Sprintf(`{instance=%q}`, h.name)
			var want, have map[string]float64
			var missing, differ []string
			deadline := time.Now().Add(30 * time.Second)
			for {
				ref, err1 := b.reference.RawSamples(ctx, sel, window, to)
				got, err2 := harness.ThanosRaw(ctx, b.query, sel, window, to, true)
				if err1 == nil && err2 == nil {
					// Prometheus 2.42 selects [from, to], Thanos' engine (from, to].
					want, have = harness.Samples(newerThan(ref, from)), harness.Samples(newerThan(got, from), "tenant_id")
					missing, differ = harness.Missing(want, have)
					if len(missing)+len(differ) == 0 || time.Now().After(deadline) {
						break
					}
				} else if time.Now().After(deadline) {
					t.Errorf("%s: %v %v", h.name, err1, err2)
					return
				}
				time.Sleep(5 * time.Second)
			}
			scrapes := 0
			for k := range want {
				if harness.FamilyOf(k) == "ernic_instances" {
					scrapes++
				}
			}
			if len(missing)+len(differ) > 0 {
				slices.Sort(missing)
				slices.Sort(differ)
				t.Errorf("%s: %d of %d samples missing through the querier (e.g. %v; %s), %d with another value (e.g. %v)",
					h.name, len(missing), len(want), missing[:min(3, len(missing))], inNoReplica(ctx, b, sel, window, to, missing),
					len(differ), differ[:min(3, len(differ))])
			}
			var extra []string
			for k := range have {
				if _, ok := want[k]; !ok {
					extra = append(extra, k)
				}
			}
			if len(extra) > 0 {
				slices.Sort(extra)
				t.Logf("%s: %d samples through the querier that the reference lacks, e.g. %v", h.name, len(extra), extra[:min(3, len(extra))])
			}
			mu.Lock()
			defer mu.Unlock()
			l.samples += len(want)
			l.lost += len(missing)
			l.differ += len(differ)
			l.extra += len(extra)
			if l.scrapes < 0 || scrapes < l.scrapes {
				l.scrapes = scrapes
			}
		})
	}
	wg.Wait()
	// The reference must have seen every host scrape all along (5 s), or
	// the comparison proves little.
	if expect := int(window / (5 * time.Second)); l.scrapes < expect*9/10 {
		t.Errorf("the reference holds %d scrapes of some host over %v, want about %d", l.scrapes, window.Round(time.Second), expect)
	}
	t.Logf("samples from %s to %s (%v): %d in the reference over %d hosts (at least %d scrapes a host), %d lost through the querier, %d with another value; %d in the querier and not in the reference",
		from.UTC().Format(time.TimeOnly), to.UTC().Format(time.TimeOnly), window.Round(time.Second), l.samples, len(f.regular()), l.scrapes, l.lost, l.differ, l.extra)
	return l
}

// inNoReplica says how many of the missing samples no receiver holds (the
// querier without deduplication, every replica's copy), to tell a sample
// lost from one the deduplication hides.
func inNoReplica(ctx context.Context, b *backend, sel string, window time.Duration, to time.Time, missing []string) string {
	raw, err := harness.ThanosRaw(ctx, b.query, sel, window, to, false)
	if err != nil {
		return err.Error()
	}
	all := harness.Samples(raw, "tenant_id", harness.ThanosReplicaLabel)
	n := 0
	for _, k := range missing {
		if _, ok := all[k]; !ok {
			n++
		}
	}
	return fmt.Sprintf("%d of them in no receiver", n)
}

// newerThan is m without the samples at or before t.
func newerThan(m model.Matrix, t time.Time) model.Matrix {
	var out model.Matrix
	for _, ss := range m {
		c := &model.SampleStream{Metric: ss.Metric}
		for _, p := range ss.Values {
			if p.Timestamp.Time().After(t) {
				c.Values = append(c.Values, p)
			}
		}
		out = append(out, c)
	}
	return out
}

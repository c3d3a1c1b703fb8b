// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// ---------------------------------------------------------------------------
// The summary of a soak (summary.json).

type summary struct {
	Duration       string            `json:"soak_duration"`
	Window         string            `json:"window_checked"`
	Instances      []int             `json:"instances"`
	FaultsInjected map[string]int    `json:"faults_injected_by_kind"`
	Skipped        map[string]string `json:"kinds_skipped"`
	NotInjected    []string          `json:"kinds_not_injected"`
	RealRestarts   map[int]int       `json:"real_restarts_by_instance"`
	RestartCauses  map[string]int    `json:"real_restarts_by_cause"`
	CompleteWrites map[int]int       `json:"complete_writes_by_instance"`
	CounterSeries  int               `json:"counter_series"`
	ResetsTotal    float64           `json:"resets_total"`
	ResetsAllowed  float64           `json:"resets_allowed_total"`
	// FalseResets are the decreases that resets() counts beyond the real
	// restarts and qp-reuse drops; FalseResetList names them, and the
	// decreases of sampled series within one process (FalseDecreases).
	FalseResets     int             `json:"false_resets"`
	FalseResetList  []string        `json:"false_resets_list,omitempty"`
	WriteResets     map[int]float64 `json:"resets_of_stats_writes_total_by_instance"`
	MMIOResets      map[int]float64 `json:"resets_of_mmio_reads_total_by_instance"`
	SampledSeries   int             `json:"sampled_series"`
	SamplesChecked  int             `json:"raw_samples_checked"`
	WrongValues     int             `json:"wrong_values"`
	WrongList       []string        `json:"wrong_values_list,omitempty"`
	SampleDecreases int             `json:"raw_sample_decreases"`
	FalseDecreases  int             `json:"raw_sample_false_decreases"`
	// Unexpected are series whose role label is neither manager nor
	// worker: a racing manifest rewrite that left valid JSON with spliced
	// values (reported, not checked).
	Unexpected      []string  `json:"series_with_unexpected_role"`
	CollectorExited bool      `json:"collector_exited_during_soak"`
	PeakRSSMiB      float64   `json:"peak_rss_mib"`
	RSSBoundMiB     int       `json:"rss_bound_mib"`
	RSSByQuarterMiB []float64 `json:"peak_rss_by_quarter_mib"`
	Threads         [2]int    `json:"threads_min_max"`
	ThreadsQuarters []int     `json:"peak_threads_by_quarter"`
	FDs             [2]int    `json:"open_fds_min_max"`
	FDsQuarters     []int     `json:"peak_fds_by_quarter"`
	Goroutines      []int     `json:"goroutines_every_10s"`
	HeapMiB         []float64 `json:"heap_alloc_mib_every_10s"`
	// Losses are the collector's own refused/failed/dropped point counters
	// at the end (reported, not checked).
	Losses map[string]float64 `json:"collector_refused_failed_dropped"`
	Log    *logReport         `json:"collector_log"`
	// InputFaults is what the checks of the input faults compared.
	InputFaults inputFaultsReport `json:"input_fault_checks"`
}

// ---------------------------------------------------------------------------
// The checks of a soak, after it ran.

// soakCheck is what the checks of a soak read, and the summary they fill
// in.
type soakCheck struct {
	cfg    soakConfig
	w      *soakWorld
	run    *chaosRun
	sum    *summary
	end    time.Time     // the end of the window
	window time.Duration // from the collector's start to end, plus 2 s
	rng    string        // window as a PromQL range
}

// resets compares resets() of every counter series with the real
// restarts.
func (c *soakCheck) resets(t *testing.T, ctx context.Context) {
	prom, run, sum, rng, end := c.w.prom, c.run, c.sum, c.rng, c.end
	sum.WriteResets, sum.MMIOResets = map[int]float64{}, map[int]float64{}
	for _, fam := range counterFamilies() {
		v, _, err := prom.Query(ctx, fmt.Sprintf("resets(%s[%s])", fam, rng), end)
		if err != nil {
			t.Fatal(err)
		}
		for _, smp := range v {
			id, _ := strconv.Atoi(string(smp.Metric["ernic_id"]))
			qp := string(smp.Metric["qp"])
			got := float64(smp.Value)
			allowed := float64(run.restarts[id])
			if qp != "" {
				allowed += float64(run.qpReuse[id][qp])
			}
			sum.CounterSeries++
			sum.ResetsTotal += got
			sum.ResetsAllowed += allowed
			if got > allowed {
				// More decreases than restarts and drops: attribute each.
				bad, nearFaults := attributeDecreases(t, ctx, prom, run, smp.Metric, fam, rng, end)
				if bad > 0 {
					sum.FalseResets += bad
					sum.FalseResetList = append(sum.FalseResetList, fmt.Sprintf("%s%s: resets %v, real restarts %d, qp-reuse drops %d; %d decreases with neither between them, %d of those after a file over max_file_bytes or across a removal of the run directory",
						fam, smp.Metric, got, run.restarts[id], run.qpReuse[id][qp], bad, nearFaults))
				}
			}
			role := string(smp.Metric["role"])
			if want := "worker"; role != want && (id != 1 || role != "manager") {
				if fam == famWrites {
					sum.Unexpected = append(sum.Unexpected, fmt.Sprintf("%s%s", fam, smp.Metric))
				}
				continue
			}
			switch fam {
			case famWrites:
				sum.WriteResets[id] = got
			case "ernic_mmio_reads_total":
				sum.MMIOResets[id] = got
			}
		}
	}
	for _, id := range run.ids {
		if id == 1 {
			continue // the manager: its file is written at startup and shutdown only
		}
		for fam, got := range map[string]map[int]float64{famWrites: sum.WriteResets, "ernic_mmio_reads_total": sum.MMIOResets} {
			if got[id] != float64(run.restarts[id]) {
				t.Errorf("resets(%s{ernic_id=\"%d\"}[%s]) = %v, want the %d real restarts of instance %d", fam, id, rng, got[id], run.restarts[id], id)
			}
		}
	}
	if sum.FalseResets > 0 {
		t.Errorf("%d false resets:\n  %s", sum.FalseResets, strings.Join(first(sum.FalseResetList, 40), "\n  "))
	}

}

// rawSamples checks the raw samples of the sampled series against the
// complete writes.
func (c *soakCheck) rawSamples(t *testing.T, ctx context.Context) {
	prom, run, sum, rng, end := c.w.prom, c.run, c.sum, c.rng, c.end
	window := c.window
	type query struct{ fam, sel string }
	var queries []query
	for fam := range deviceFamilies {
		queries = append(queries, query{fam, ""})
	}
	queries = append(queries, query{famWrites, ""}, query{famQPCount, ""},
		query{famLIF, fmt.Sprintf(`,counter=~"%s"`, strings.Join(sim.ChaosSampleLIF, "|"))},
		query{famOpcode, fmt.Sprintf(`,qp=~"%s"`, qpSampledRE)})
	for fam := range qpFamilies {
		queries = append(queries, query{fam, fmt.Sprintf(`,qp=~"%s"`, qpSampledRE)})
	}
	for _, id := range run.ids {
		for _, q := range queries {
			_, m, err := prom.Query(ctx, fmt.Sprintf(`%s{ernic_id="%d"%s}[%s]`, q.fam, id, q.sel, rng), end)
			if err != nil {
				t.Fatal(err)
			}
			for _, ss := range m {
				k := seriesKey{id: id, family: q.fam, qp: string(ss.Metric["qp"])}
				switch q.fam {
				case famLIF:
					k.label = string(ss.Metric["counter"])
				case famOpcode:
					k.label = string(ss.Metric["opcode"])
				}
				checkSeries(sum, run, k, ss.Values)
			}
		}
	}
	if len(sum.Unexpected) > 0 {
		t.Logf("series with a role neither manager nor worker (a racing manifest rewrite left valid JSON with spliced values): %v", sum.Unexpected)
	}
	if sum.WrongValues > 0 {
		t.Errorf("%d raw samples are no value the simulator wrote completely:\n  %s", sum.WrongValues, strings.Join(first(sum.WrongList, 40), "\n  "))
	}
	if sum.FalseDecreases > 0 {
		t.Errorf("%d decreases between raw samples within one server process (see false_resets_list)", sum.FalseDecreases)
	}
	// Not vacuous: every worker's write count has samples over most of the
	// window.
	for _, id := range run.ids {
		_, m, err := prom.Query(ctx, fmt.Sprintf(`%s{ernic_id="%d"}[%s]`, famWrites, id, rng), end)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ss := range m {
			n += len(ss.Values)
		}
		if id != 1 && id <= 5 && float64(n) < 0.5*window.Seconds() {
			t.Errorf("instance %d: only %d samples of %s in %v", id, n, famWrites, window)
		}
	}

}

// resources checks the collector's resources: RSS under its bound, no
// growth of threads, open files, RSS (in a soak of 10 min or more) and
// goroutines.
func (c *soakCheck) resources(t *testing.T) {
	mon, col, sum := c.w.mon, c.w.col, c.sum
	rssBound, duration := c.cfg.rssBound, c.cfg.duration
	mon.mu.Lock()
	samples := slices.Clone(mon.samples)
	heap := slices.Clone(mon.heap)
	mon.mu.Unlock()
	sum.Goroutines = goroutineCounts(col.Stderr.String())
	for _, h := range heap {
		sum.HeapMiB = append(sum.HeapMiB, math.Round(h/(1<<20)*10)/10)
	}
	if len(samples) == 0 {
		t.Fatal("no resource samples of the collector")
	}
	sum.Threads = [2]int{math.MaxInt, 0}
	sum.FDs = [2]int{math.MaxInt, 0}
	var peak int64
	for _, r := range samples {
		peak = max(peak, r.rssKiB)
		sum.Threads = [2]int{min(sum.Threads[0], r.threads), max(sum.Threads[1], r.threads)}
		sum.FDs = [2]int{min(sum.FDs[0], r.fds), max(sum.FDs[1], r.fds)}
	}
	sum.PeakRSSMiB = math.Round(float64(peak)/1024*10) / 10
	q := len(samples) / 4
	for i := range 4 {
		part := samples[i*q : max(i*q+1, (i+1)*q)]
		if i == 3 {
			part = samples[i*q:]
		}
		var r int64
		var th, fd int
		for _, x := range part {
			r, th, fd = max(r, x.rssKiB), max(th, x.threads), max(fd, x.fds)
		}
		sum.RSSByQuarterMiB = append(sum.RSSByQuarterMiB, math.Round(float64(r)/1024*10)/10)
		sum.ThreadsQuarters = append(sum.ThreadsQuarters, th)
		sum.FDsQuarters = append(sum.FDsQuarters, fd)
	}
	if sum.PeakRSSMiB > float64(rssBound) {
		t.Errorf("peak RSS %.1f MiB, above the bound of %d MiB", sum.PeakRSSMiB, rssBound)
	}
	// Growth: the last quarter against the second (the first is start-up).
	if th := sum.ThreadsQuarters; th[3] > th[1]+4 {
		t.Errorf("threads grew: peak by quarter %v", th)
	}
	if fd := sum.FDsQuarters; fd[3] > fd[1]+8 {
		t.Errorf("open files grew: peak by quarter %v", fd)
	}
	if duration >= 10*time.Minute {
		if r := sum.RSSByQuarterMiB; r[3] > r[1]*1.25+32 {
			t.Errorf("RSS grew: peak by quarter %v MiB", r)
		}
	}
	if g := sum.Goroutines; len(g) >= 4 {
		mid, last := medianInts(g[len(g)/4:len(g)/2]), medianInts(g[len(g)*3/4:])
		if last > mid*1.2+10 {
			t.Errorf("goroutines grew: median %v in the second quarter, %v in the last: %v", mid, last, g)
		}
	} else {
		t.Errorf("too few goroutine counts from GODEBUG=schedtrace: %v", g)
	}

}

// collectorLog checks the collector's log: each fault key at most once per
// interval, no counter overflow logged twice for a process, no panic.
func (c *soakCheck) collectorLog(t *testing.T) {
	col, run, sum := c.w.col, c.run, c.sum
	sum.Log = analyseLog(col.Log.String(), run)
	if len(sum.Log.TooOften) > 0 {
		t.Errorf("faults logged more often than once per %v:\n  %s", faultInterval, strings.Join(first(sum.Log.TooOften, 40), "\n  "))
	}
	if len(sum.Log.OverflowDup) > 0 {
		t.Errorf("counters above 2^63-1 logged more than once per process:\n  %s", strings.Join(sum.Log.OverflowDup, "\n  "))
	}
	if strings.Contains(col.Log.String()+col.Stderr.String(), "panic:") {
		t.Errorf("the collector panicked:\n%s", harness.Tail(col.Log.String(), 8000))
	}

}

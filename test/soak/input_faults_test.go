// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// ---------------------------------------------------------------------------
// The input faults (invalid UTF-8, a future mtime, pid reuse, a growing manifest), checked on what Prometheus stored
// (input_faults_checks_test.go has the checks).

// inputFaultsReport is what the input-fault checks saw (summary.json).
type inputFaultsReport struct {
	// Windows are the faults of the kind, Checked those with samples
	// inside the fault (after the lags), Samples the samples compared.
	PIDReuse    checkCount `json:"pid_reuse_instance_up"`
	InvalidUTF8 checkCount `json:"invalid_utf8"`
	FutureMtime checkCount `json:"future_mtime_stats_age"`
	// AgeSamples are all the ernic_stats_age_seconds samples, none may be
	// negative.
	AgeSamples   int        `json:"stats_age_samples"`
	MaxInstances checkCount `json:"max_instances_unpublished"`
	PublishedIDs []int      `json:"published_instance_ids"`
	AddedIDs     []int      `json:"instances_added"`
}

// checkCount counts what one check compared, and what it found wrong.
type checkCount struct {
	Windows int      `json:"fault_windows"`
	Checked int      `json:"fault_windows_checked"`
	Samples int      `json:"samples_checked"`
	Skipped []string `json:"skipped,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

func (c *checkCount) errorf(format string, args ...any) {
	c.Errors = append(c.Errors, fmt.Sprintf(format, args...))
}

// report fails t with c's errors, or when no window was checked while
// there were windows (a check that compared nothing).
func (c *checkCount) report(t *testing.T, what string) {
	t.Helper()
	if c.Windows > 0 && c.Checked == 0 {
		t.Errorf("%s: none of %d fault windows had a sample to check (skipped: %v)", what, c.Windows, c.Skipped)
	}
	if len(c.Errors) > 0 {
		t.Errorf("%s: %d errors:\n  %s", what, len(c.Errors), strings.Join(first(c.Errors, 30), "\n  "))
	}
	t.Logf("%s: %d fault windows, %d checked, %d samples; skipped %v", what, c.Windows, c.Checked, c.Samples, c.Skipped)
}

// ---------------------------------------------------------------------------
// The checks on the soak's Prometheus.

func (c *soakCheck) matrix(t *testing.T, ctx context.Context, sel string) model.Matrix {
	t.Helper()
	_, m, err := c.w.prom.Query(ctx, fmt.Sprintf("%s[%s]", sel, c.rng), c.end)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (c *soakCheck) pidReuseUp(t *testing.T, ctx context.Context) {
	up := samplesByID(c.matrix(t, ctx, "ernic_instance_up"))
	r := checkPIDReuseUp(c.run.windows[sim.ChaosPIDReuse], c.run.windows[sim.ChaosRunDirRecreate], c.run.windows[sim.ChaosFutureMtime], up, c.end)
	c.sum.InputFaults.PIDReuse = r
	r.report(t, "pid-reuse: ernic_instance_up")
}

func (c *soakCheck) invalidUTF8(t *testing.T, ctx context.Context) {
	counters := c.matrix(t, ctx, famLIF+`{counter=~"rx_chaos_.*"}`)
	states := c.matrix(t, ctx, `ernic_connection_up{state=~"connected .chaos.*"}`)
	truncated := samplesByID(c.matrix(t, ctx, "ernic_labels_truncated"))
	r := checkInvalidUTF8(c.run.windows[sim.ChaosInvalidUTF8], counters, states, truncated)
	c.sum.InputFaults.InvalidUTF8 = r
	r.report(t, "invalid-utf8: sanitised names, ernic_labels_truncated")
}

func (c *soakCheck) futureMtime(t *testing.T, ctx context.Context) {
	age := samplesByID(c.matrix(t, ctx, "ernic_stats_age_seconds"))
	for _, ss := range age {
		c.sum.InputFaults.AgeSamples += len(ss)
	}
	if c.sum.InputFaults.AgeSamples == 0 {
		t.Errorf("no ernic_stats_age_seconds sample")
	}
	r := checkFutureMtime(c.run.windows[sim.ChaosFutureMtime], age)
	c.sum.InputFaults.FutureMtime = r
	r.report(t, "future-mtime: ernic_stats_age_seconds")
}

func (c *soakCheck) maxInstances(t *testing.T, ctx context.Context) {
	adds := append(slices.Clone(c.run.windows[sim.ChaosHugeInstance]), c.run.windows[sim.ChaosManifestGrow]...)
	slices.SortFunc(adds, func(a, b faultWindow) int { return a.start.Compare(b.start) })
	var noisy []faultWindow
	for _, k := range []string{sim.ChaosManifestRace, sim.ChaosManifestTorn, sim.ChaosRunDirRecreate} {
		noisy = append(noisy, c.run.windows[k]...)
	}
	var unpublished []model.SamplePair
	for _, ss := range c.matrix(t, ctx, "ernic_instances_unpublished") {
		unpublished = append(unpublished, ss.Values...)
	}
	if len(unpublished) == 0 {
		t.Errorf("no ernic_instances_unpublished sample")
	}
	up := samplesByID(c.matrix(t, ctx, "ernic_instance_up"))
	r, ids := checkMaxInstances(soakInstances, soakMaxInstances, adds, noisy, unpublished, up, c.end)
	c.sum.InputFaults.MaxInstances, c.sum.InputFaults.PublishedIDs = r, ids
	for _, a := range adds {
		c.sum.InputFaults.AddedIDs = append(c.sum.InputFaults.AddedIDs, a.id)
	}
	r.report(t, "max_instances: ernic_instances_unpublished, published ids")
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"
	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// TestDeliveryCountsMatchPrometheus: the points remote_write says the
// backend accepted are the samples a real Prometheus holds. Each sample of
// otelcol_delivery_points_sent_total, taken at T, must equal the number
// of this host's samples in Prometheus up to some batch shortly before T
// (the batches are sent in order; the one made at T, and one still in
// merge_window, are not sent yet).
func TestDeliveryCountsMatchPrometheus(t *testing.T) {
	t.Parallel()
	r := newRemoteWrite(t, sim.Options{Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 31})
	r.startCollector()
	ctx := context.Background()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	sentSel := fmt.Sprintf(`otelcol_delivery_points_sent_total{instance=%q, job="ernic", exporter="remote_write"}`, host)
	start := time.Now()
	eventually(t, waitTimeout, "20 counts of the points sent in Prometheus", func() []string {
		m, err := r.prom.RawSamples(ctx, sentSel, time.Since(start)+time.Minute, time.Now())
		if err != nil || len(m) != 1 || len(m[0].Values) < 20 {
			return []string{fmt.Sprintf("%v (%v)", m, err)}
		}
		return nil
	})
	// The last counts' batches are in Prometheus a second later.
	time.Sleep(2 * time.Second)
	end := time.Now()

	all, err := r.prom.RawSamples(ctx, fmt.Sprintf(`{instance=%q}`, host), end.Sub(start)+time.Minute, end)
	if err != nil {
		t.Fatal(err)
	}
	var stamps []model.Time // every sample of the host
	var sent []model.SamplePair
	for _, s := range all {
		if s.Metric["job"] != "ernic" {
			t.Errorf("%s: job %q, want ernic", s.Metric, s.Metric["job"])
		}
		for _, v := range s.Values {
			stamps = append(stamps, v.Timestamp)
		}
		if s.Metric[model.MetricNameLabel] == "otelcol_delivery_points_sent_total" {
			sent = s.Values
		}
	}
	slices.Sort(stamps)
	upTo := func(c model.Time) int { return sort.Search(len(stamps), func(i int) bool { return stamps[i] > c }) }

	checked := 0
	for _, sp := range sent[:len(sent)-1] { // the last count's own batch may not be in yet
		got, at := int(sp.Value), sp.Timestamp
		// The cuts: every batch's time from 2s before the count to the
		// count's own batch, which is not sent yet.
		var cuts []int
		for i := upTo(at.Add(-2 * time.Second)); i < len(stamps) && stamps[i] < at; i++ {
			if i+1 == len(stamps) || stamps[i+1] != stamps[i] {
				cuts = append(cuts, i+1)
			}
		}
		cuts = append(cuts, upTo(at.Add(-2*time.Second)))
		if !slices.Contains(cuts, got) {
			t.Errorf("points sent at %s: %d; Prometheus holds %v samples of the host up to each batch of the 2s before", at.Time().Format("15:04:05.000"), got, cuts)
		}
		checked++
	}
	t.Logf("%d counts of otelcol_delivery_points_sent_total each equal to the samples Prometheus holds up to a batch of the 2s before it (%d samples of the host in all)", checked, len(stamps))

	for q, want := range map[string]float64{
		`sum(otelcol_delivery_points_dropped_total)`:               0,
		`count(otelcol_delivery_points_dropped_total)`:             float64(len(deliverystats.DroppedReasons)),
		`sum(otelcol_delivery_points_rejected_total) or vector(0)`: 0,
		`sum(otelcol_delivery_points_not_written_total)`:           0,
		// ERNIC_BUFFER_MAX_BYTES's default.
		`otelcol_delivery_queue_capacity{sizer="bytes"}`: 268435456,
	} {
		if got, err := r.prom.ScalarAt(ctx, q, end); err != nil || got != want {
			t.Errorf("%s = %v (%v), want %v", q, got, err, want)
		}
	}
	if perSample, err := r.prom.ScalarAt(ctx, `max(otelcol_delivery_bytes_sent_total) / max(otelcol_delivery_points_sent_total)`, end); err != nil || perSample < 1 || perSample > 50 {
		t.Errorf("bytes sent per point sent: %v (%v), want 1 to 50 (remote write: about 12)", perSample, err)
	} else {
		t.Logf("%.1f bytes sent per point (snappy-compressed requests)", perSample)
	}
}

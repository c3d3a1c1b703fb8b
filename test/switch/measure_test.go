// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package switchtest

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// scrapeInterval is Prometheus's, as a site scrapes the legacy exporter.
const scrapeInterval = 5 * time.Second

// probeName is a family whose presence makes an answer complete: a
// listener that has not read the run directory yet answers without it.
const probeName = "ernic_rdma_bytes_sent_total"

const probeFamily = "\n" + probeName + "{"

// poller GETs /metrics every few milliseconds, to time the gap of a switch
// more finely than a 5 s scrape can.
type poller struct {
	mu    sync.Mutex
	polls []poll
}

type poll struct {
	at time.Time
	ok bool
	// listening: an HTTP answer came, complete or not.
	listening bool
}

func startPoller(t *testing.T, url string, every time.Duration) *poller {
	t.Helper()
	return startPollerWith(t, &http.Client{Timeout: time.Second}, "", url, every)
}

// startPollerWith is startPoller through client, with an Authorization
// header when authorization is not "".
func startPollerWith(t *testing.T, client *http.Client, authorization, url string, every time.Duration) *poller {
	t.Helper()
	p := &poller{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			at := time.Now()
			q := poll{at: at}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if authorization != "" {
				req.Header.Set("Authorization", authorization)
			}
			if resp, err := client.Do(req); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				q.listening = true
				q.ok = resp.StatusCode == http.StatusOK && strings.Contains(string(body), probeFamily)
			}
			p.mu.Lock()
			p.polls = append(p.polls, q)
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// Gap is the longest time in [from, to] between two complete answers with
// only failed or incomplete ones between them (0 when none failed), and
// the number of polls that found no listener and that found one answering
// without the ernic_ series.
func (p *poller) Gap(from, to time.Time) (gap time.Duration, down, empty int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lastOK time.Time
	failing := false
	for _, q := range p.polls {
		if q.at.Before(from) || q.at.After(to) {
			continue
		}
		if !q.ok {
			if q.listening {
				empty++
			} else {
				down++
			}
			failing = true
			continue
		}
		if failing && !lastOK.IsZero() {
			gap = max(gap, q.at.Sub(lastOK))
		}
		failing = false
		lastOK = q.at
	}
	if failing {
		gap = max(gap, to.Sub(lastOK)) // still failing at the end: the window's rest
	}
	return gap, down, empty
}

// scrapes is what Prometheus's own series of a scrape job say about a time
// window: its scrapes, those that failed (up 0), the slots with no scrape
// at all, and those that succeeded with fewer samples than full.
type scrapes struct {
	Scrapes, Failed, Missed, Partial int
}

// Bad is the scrapes a dashboard misses data from.
func (s scrapes) Bad() int { return s.Failed + s.Missed + s.Partial }

func (s scrapes) String() string {
	return fmt.Sprintf("%d scrapes: %d failed (up 0), %d slots without a scrape, %d with fewer samples",
		s.Scrapes, s.Failed, s.Missed, s.Partial)
}

func scrapesIn(t *testing.T, p *harness.Prometheus, job string, from, to time.Time, full float64) scrapes {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up := rawOne(ctx, t, p, fmt.Sprintf(`up{job=%q}`, job), from, to)
	samples := map[model.Time]float64{}
	for _, s := range rawOne(ctx, t, p, fmt.Sprintf(`scrape_samples_scraped{job=%q}`, job), from, to) {
		samples[s.Timestamp] = float64(s.Value)
	}
	var r scrapes
	for i, s := range up {
		r.Scrapes++
		switch {
		case s.Value == 0:
			r.Failed++
		case samples[s.Timestamp] < full:
			r.Partial++
		}
		if i > 0 {
			// A scrape slot with no sample at all (Prometheus late, or
			// the scrape not run).
			d := s.Timestamp.Sub(up[i-1].Timestamp)
			r.Missed += int(math.Round(float64(d)/float64(scrapeInterval))) - 1
		}
	}
	return r
}

func rawOne(ctx context.Context, t *testing.T, p *harness.Prometheus, selector string, from, to time.Time) []model.SamplePair {
	t.Helper()
	m, err := p.RawSamples(ctx, selector, to.Sub(from), to)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 {
		t.Fatalf("%s over (%v, %v]: %d series, want 1", selector, from.Format(time.TimeOnly), to.Format(time.TimeOnly), len(m))
	}
	return m[0].Values
}

func sampleCounts(t *testing.T, p *harness.Prometheus, job string, from, to time.Time) (lo, hi float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range rawOne(ctx, t, p, fmt.Sprintf(`scrape_samples_scraped{job=%q}`, job), from, to) {
		lo, hi = min(lo, float64(s.Value)), max(hi, float64(s.Value))
	}
	return lo, hi
}

func seriesIn(t *testing.T, p *harness.Prometheus, selector string, from, to time.Time) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := p.RawSamples(ctx, selector, to.Sub(from), to)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(m))
	for _, s := range m {
		out = append(out, s.Metric.String())
	}
	sort.Strings(out)
	return out
}

func diff(a, b []string, n int) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] && len(out) < n {
			out = append(out, s)
		}
	}
	return out
}

// TestPollerGap: the gap runs from the last complete answer before a
// failure to the first one after it, and one still failing at the end of
// the window runs to its end.
func TestPollerGap(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	p := &poller{polls: []poll{
		{at(0), true, true}, {at(100), false, false}, {at(200), false, true}, {at(300), false, true},
		{at(400), true, true}, {at(500), true, true},
		{at(600), false, false}, {at(700), true, true},
		{at(800), false, true},
	}}
	for _, c := range []struct {
		from, to    int
		gap         time.Duration
		down, empty int
	}{
		{0, 500, 400 * time.Millisecond, 1, 2},
		{400, 750, 200 * time.Millisecond, 1, 0},
		{400, 1000, 300 * time.Millisecond, 1, 1},
		{400, 550, 0, 0, 0},
	} {
		gap, down, empty := p.Gap(at(c.from), at(c.to))
		if gap != c.gap || down != c.down || empty != c.empty {
			t.Errorf("Gap(%d ms, %d ms) = %v, %d, %d; want %v, %d, %d", c.from, c.to, gap, down, empty, c.gap, c.down, c.empty)
		}
	}
}

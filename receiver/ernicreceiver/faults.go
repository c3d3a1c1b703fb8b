// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/collector/scraper/scrapererror"
)

// faultInterval is how often one persisting fault is reported again.
const faultInterval = 10 * time.Minute

// faultLimiter reports a fault key the first time, then at most once per
// interval, so a broken file logs once per interval, not once per scrape.
type faultLimiter struct {
	interval time.Duration
	last     map[string]time.Time
}

func newFaultLimiter(interval time.Duration) *faultLimiter {
	return &faultLimiter{interval: interval, last: map[string]time.Time{}}
}

// due reports whether key is due at now, and if so remembers now.
func (l *faultLimiter) due(key string, now time.Time) bool {
	if t, ok := l.last[key]; ok && now.Sub(t) < l.interval {
		return false
	}
	l.last[key] = now
	return true
}

// prune forgets keys older than one interval, to keep the map small.
func (l *faultLimiter) prune(now time.Time) {
	for k, t := range l.last {
		if now.Sub(t) >= l.interval {
			delete(l.last, k)
		}
	}
}

// scrapeErrors collects this scrape's faults. Only faults the limiter finds
// due are returned (and so logged); all of them count as failed points.
type scrapeErrors struct {
	faults *faultLimiter
	now    time.Time
	errs   []error
	failed int
}

func newScrapeErrors(faults *faultLimiter, now time.Time) *scrapeErrors {
	return &scrapeErrors{faults: faults, now: now}
}

// add counts failed points and keeps err when key is due.
func (e *scrapeErrors) add(key string, failed int, err error) {
	e.failed += failed
	if e.faults.due(key, e.now) {
		e.errs = append(e.errs, err)
	}
}

// errFaultsReported is the scrape error when every fault was reported
// before: it carries the failed points without an Error log line.
var errFaultsReported = errors.New("faults reported before, still present")

// onlyReported tells whether err is errFaultsReported, partial or not.
func onlyReported(err error) bool {
	var pe scrapererror.PartialScrapeError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Error(), errFaultsReported.Error())
	}
	return errors.Is(err, errFaultsReported)
}

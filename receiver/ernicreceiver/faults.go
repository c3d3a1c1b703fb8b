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

// faultLimiter rate-limits fault reports by key (a fault kind plus the file
// or instance it concerns, plus what tells one such fault from another: a
// count, the first problem, the cause): a key is reported the first time it is seen and
// then at most once per interval while it persists. The scraper returns
// reported faults as (partial) scrape errors, which the scraper controller
// logs, so one broken file yields one log line per interval, not one per
// scrape.
type faultLimiter struct {
	interval time.Duration
	last     map[string]time.Time
}

func newFaultLimiter(interval time.Duration) *faultLimiter {
	return &faultLimiter{interval: interval, last: map[string]time.Time{}}
}

// due reports whether a fault with this key should be reported at now, and
// if so remembers now as its last report.
func (l *faultLimiter) due(key string, now time.Time) bool {
	if t, ok := l.last[key]; ok && now.Sub(t) < l.interval {
		return false
	}
	l.last[key] = now
	return true
}

// prune forgets keys last reported more than one interval before now, so the
// map stays as small as the set of recent faults.
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

// newScrapeErrors collects the faults of a scrape at now, reported through
// faults.
func newScrapeErrors(faults *faultLimiter, now time.Time) *scrapeErrors {
	return &scrapeErrors{faults: faults, now: now}
}

// add counts a fault of failed points, and keeps err for the scrape's error
// when the limiter finds key due.
func (e *scrapeErrors) add(key string, failed int, err error) {
	e.failed += failed
	if e.faults.due(key, e.now) {
		e.errs = append(e.errs, err)
	}
}

// errFaultsReported is the scrape error when every fault of a scrape was
// reported before: it carries their failed points, without a log line at
// Error (onlyReported).
var errFaultsReported = errors.New("faults reported before, still present")

// onlyReported tells whether err is errFaultsReported, alone or as a
// partial scrape error.
func onlyReported(err error) bool {
	var pe scrapererror.PartialScrapeError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Error(), errFaultsReported.Error())
	}
	return errors.Is(err, errFaultsReported)
}

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"time"
)

// faultInterval is how often one persisting fault is reported again.
const faultInterval = 10 * time.Minute

// faultLimiter rate-limits fault reports by key (a fault kind plus the file
// or instance it concerns): a key is reported the first time it is seen and
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

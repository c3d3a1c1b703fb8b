// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter bounds the wait a backend asks for (HTTP Retry-After, gRPC
// RetryInfo): a wrong clock or proxy must not stall the queue for hours
// while the bound drops the oldest batches. README.md, Retries.
const MaxRetryAfter = 5 * time.Minute

// retryAfterError carries the backend's wish, and what was made of it.
type retryAfterError struct {
	err   error
	after time.Duration
	note  string
}

func (e *retryAfterError) Error() string             { return e.err.Error() }
func (e *retryAfterError) Unwrap() error             { return e.err }
func (e *retryAfterError) RetryAfter() time.Duration { return e.after }

// NewRetryAfter returns err, retried no sooner than after (at most MaxRetryAfter).
func NewRetryAfter(err error, after time.Duration) error {
	e := &retryAfterError{err: err, after: min(max(after, 0), MaxRetryAfter)}
	if after > MaxRetryAfter {
		e.note = fmt.Sprintf("asked for %s, waits %s (the cap)", after, MaxRetryAfter)
	}
	return e
}

// RetryAfterHeader returns err with an HTTP Retry-After (delay-seconds or
// an HTTP date, RFC 9110 10.2.3) read against now. A value in the past, or
// one that is neither, leaves the backoff alone, and the log says so.
func RetryAfterHeader(err error, v string, now time.Time) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return err
	}
	var d time.Duration
	if s, perr := strconv.ParseUint(v, 10, 63); perr == nil || errors.Is(perr, strconv.ErrRange) {
		// A number past 2^63 is still seconds: far beyond the cap.
		d = time.Duration(min(s, uint64(MaxRetryAfter/time.Second)+1)) * time.Second
	} else if t, perr := http.ParseTime(v); perr == nil {
		if d = t.Sub(now); d <= 0 {
			return &retryAfterError{err: err, note: fmt.Sprintf("Retry-After %q is past; the backoff applies", v)}
		}
	} else {
		return &retryAfterError{err: err, note: fmt.Sprintf("Retry-After %q is neither seconds nor an HTTP date; the backoff applies", v)}
	}
	ra := NewRetryAfter(err, d).(*retryAfterError)
	if d > MaxRetryAfter {
		ra.note = fmt.Sprintf("Retry-After %q is beyond the cap; waits %s", v, MaxRetryAfter)
	}
	return ra
}

// RetryAfter is how long err's chain asks a retry to wait (0: no wish).
func RetryAfter(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return ra.RetryAfter()
	}
	return 0
}

// retryAfterNote is what was made of a backend's wish that was not taken as it came.
func retryAfterNote(err error) string {
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return ra.note
	}
	return ""
}

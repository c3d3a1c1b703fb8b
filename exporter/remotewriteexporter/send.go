// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sendError is why one remote-write request did not go through.
type sendError struct {
	// cause groups failures for the rate-limited logs: "connection",
	// "timeout", "http 503", "rejected: http 400".
	cause string
	// rejected: the endpoint refused this request; the remote-write
	// specification forbids sending it again.
	rejected bool
	// status is the HTTP status of the answer, 0 without one.
	status int
	// retryAfter is the wait the endpoint asked for (Retry-After on a 429
	// or 503), 0 when it did not.
	retryAfter time.Duration
	err        error
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// maxRetryAfter bounds the wait a Retry-After header can ask for: a wrong
// clock or a misconfigured proxy must not stall the queue for hours.
const maxRetryAfter = 5 * time.Minute

// post sends one compressed request. It returns nil when the endpoint
// accepted it (2xx) and a *sendError otherwise.
func (e *remoteWrite) post(ctx context.Context, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.Endpoint, bytes.NewReader(payload))
	if err != nil {
		return &sendError{cause: "request", rejected: true, err: err}
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", e.userAgent)
	resp, err := e.client.Do(req)
	if err != nil {
		cause := "connection"
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			cause = "timeout"
		}
		return &sendError{cause: cause, err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	err = fmt.Errorf("%s answered %s: %s", e.cfg.Endpoint, resp.Status, strings.TrimSpace(string(body)))
	code := resp.StatusCode
	se := &sendError{cause: fmt.Sprintf("http %d", code), status: code, err: err}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		se.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	// Remote write 1.0 and 2.0: a sender MUST NOT retry a 4xx other than
	// 429; 401 and 403 only when the operator chose to wait for new
	// credentials (retry_on_auth_errors).
	if code/100 == 4 && code != http.StatusTooManyRequests &&
		(!e.cfg.RetryOnAuthErrors || (code != http.StatusUnauthorized && code != http.StatusForbidden)) {
		se.cause, se.rejected = "rejected: "+se.cause, true
	}
	return se
}

// retryAfter reads a Retry-After value, delay-seconds or an HTTP date,
// bounded by maxRetryAfter; 0 when it is absent, bad or in the past.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

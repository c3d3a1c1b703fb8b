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
	// toV1: a 2.0 request the endpoint cannot read (415, or a 2xx that
	// wrote nothing); it is sent again as 1.0.
	toV1 bool
	// retryAfter is the wait the endpoint asked for (Retry-After on a 429
	// or 503), 0 when it did not.
	retryAfter time.Duration
	err        error
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// RetryAfter is the endpoint's Retry-After, for pushqueue's Sender.
func (e *sendError) RetryAfter() time.Duration { return e.retryAfter }

// sendFrom sends req's payloads from req.next on. It returns the first
// failure that should be retried; rejected payloads are reported and
// skipped.
func (e *remoteWrite) sendFrom(ctx context.Context, req *request) error {
	for ; req.next < len(req.payloads); req.next++ {
		select {
		case <-e.sender.Stopping():
			// Stopping: no new attempt, so that draining an in-memory
			// queue at shutdown does not take a timeout per batch.
			return errors.New("remote_write: stopping")
		default:
		}
		if req.proto == protocolV2 && e.tr.proto.Load() == uint32(protocolV1) {
			e.toV1(req)
		}
		err := e.post(ctx, req.payloads[req.next], req.proto, req.samples[req.next])
		var se *sendError
		switch {
		case err == nil:
			e.report.Delivered(req.samples[req.next], e.backlog())
		case errors.As(err, &se) && se.toV1:
			e.fallBack(se)
			e.toV1(req)
			req.next-- // the same request again, as 1.0
		case errors.As(err, &se) && se.rejected:
			e.report.Rejected(se.cause, se.err, req.samples[req.next], e.backlog())
		default:
			return err
		}
	}
	return nil
}

// maxRetryAfter bounds the wait a Retry-After header can ask for: a wrong
// clock or a misconfigured proxy must not stall the queue for hours.
const maxRetryAfter = 5 * time.Minute

// post sends one compressed request of n samples. It returns nil when the
// endpoint accepted it (2xx) and a *sendError otherwise.
func (e *remoteWrite) post(ctx context.Context, payload []byte, proto protocol, n int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.Endpoint, bytes.NewReader(payload))
	if err != nil {
		return &sendError{cause: "request", rejected: true, err: err}
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", proto.contentType())
	req.Header.Set("X-Prometheus-Remote-Write-Version", proto.version())
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
		if proto == protocolV2 {
			return e.checkWritten(resp.Header, n)
		}
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
	if code == http.StatusUnsupportedMediaType && proto == protocolV2 {
		se.toV1 = true
		return se
	}
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

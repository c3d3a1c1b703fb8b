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
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// sendError is why one remote-write request did not go through.
type sendError struct {
	// cause groups failures for the logs ("timeout", "rejected: http 400").
	cause string
	// rejected: the specification forbids sending it again.
	rejected bool
	// status is 0 without an answer.
	status int
	// toV1: the endpoint cannot read 2.0; send it again as 1.0.
	toV1 bool
	// retryAfter is 0 when the endpoint asked for no wait.
	retryAfter time.Duration
	err        error
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// RetryAfter is the endpoint's Retry-After, for pushqueue's Sender.
func (e *sendError) RetryAfter() time.Duration { return e.retryAfter }

// writer is the remote-write client: it posts a batch's requests in order,
// by the specification's rules, and falls back to 1.0 when a 2.0 request
// is not understood.
type writer struct {
	endpoint    string
	retryOnAuth bool
	userAgent   string
	client      *http.Client // set at Start
	logger      *zap.Logger
	report      *deliveryreport.Report
	backlog     func() deliveryreport.Backlog
	stopping    <-chan struct{}
	// proto is what the translator writes new requests in (Translator.Protocol).
	proto *atomic.Uint32
}

// send sends req's payloads from req.next on, skipping rejected ones, and
// returns the first failure to retry.
func (e *writer) send(ctx context.Context, req *request) error {
	for ; req.next < len(req.payloads); req.next++ {
		select {
		case <-e.stopping:
			// Draining an in-memory queue must not take a timeout per batch.
			return errors.New("remote_write: stopping")
		default:
		}
		if req.proto == translator.ProtocolV2 && e.proto.Load() == uint32(translator.ProtocolV1) {
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

// maxRetryAfter: a wrong clock or proxy must not stall the queue for hours.
const maxRetryAfter = 5 * time.Minute

// post sends one compressed request of n samples; a *sendError unless 2xx.
func (e *writer) post(ctx context.Context, payload []byte, proto translator.Protocol, n int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(payload))
	if err != nil {
		return &sendError{cause: "request", rejected: true, err: err}
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", proto.ContentType())
	req.Header.Set("X-Prometheus-Remote-Write-Version", proto.Version())
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
		if proto == translator.ProtocolV2 {
			return e.checkWritten(resp.Header, n)
		}
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	err = fmt.Errorf("%s answered %s: %s", e.endpoint, resp.Status, strings.TrimSpace(string(body)))
	code := resp.StatusCode
	se := &sendError{cause: fmt.Sprintf("http %d", code), status: code, err: err}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		se.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	// The specification: a sender MUST NOT retry a 4xx other than 429
	// (401 and 403 only with retry_on_auth_errors).
	if code == http.StatusUnsupportedMediaType && proto == translator.ProtocolV2 {
		se.toV1 = true
		return se
	}
	if code/100 == 4 && code != http.StatusTooManyRequests &&
		(!e.retryOnAuth || (code != http.StatusUnauthorized && code != http.StatusForbidden)) {
		se.cause, se.rejected = "rejected: "+se.cause, true
	}
	return se
}

// retryAfter reads Retry-After (seconds or an HTTP date); 0 when absent, bad or past.
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

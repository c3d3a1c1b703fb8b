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

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
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
	err  error
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// writer is the remote-write client: it posts a batch's requests in order,
// by the specification's rules, and falls back to 1.0 when a 2.0 request
// is not understood.
type writer struct {
	endpoint    string
	retryOnAuth bool
	userAgent   string
	client      *http.Client // set at Start
	logger      *zap.Logger
	stopping    <-chan struct{}
	// proto is what the translator writes new requests in (Translator.Protocol).
	proto *atomic.Uint32
}

// send sends req's payloads from req.next on, skipping rejected ones, and
// returns the first failure to retry; t counts each payload's outcome.
func (e *writer) send(ctx context.Context, req *request, t *pushqueue.Tally) error {
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
		err := e.post(ctx, req.payloads[req.next], req.proto, req.samples[req.next], t)
		var se *sendError
		switch {
		case err == nil:
			t.Sent(req.samples[req.next], len(req.payloads[req.next]))
		case errors.As(err, &se) && se.toV1:
			e.fallBack(se)
			e.toV1(req)
			req.next-- // the same request again, as 1.0
		case errors.As(err, &se) && se.rejected:
			t.Rejected(se.cause, se.err, req.samples[req.next])
		default:
			t.Failing(req.samples[req.next])
			return err
		}
	}
	return nil
}

// post sends one compressed request of n samples; a *sendError unless 2xx.
func (e *writer) post(ctx context.Context, payload []byte, proto translator.Protocol, n int, t *pushqueue.Tally) error {
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
			return e.checkWritten(resp.Header, n, t)
		}
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	err = fmt.Errorf("%s answered %s: %s", e.endpoint, resp.Status, strings.TrimSpace(string(body)))
	code := resp.StatusCode
	se := &sendError{cause: fmt.Sprintf("http %d", code), status: code, err: err}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		return pushqueue.RetryAfterHeader(se, resp.Header.Get("Retry-After"), time.Now())
	}
	// The specification: a sender MUST NOT retry a 4xx other than 429
	// (401 and 403 only with retry_on_auth_errors).
	if code == http.StatusUnsupportedMediaType && proto == translator.ProtocolV2 {
		se.toV1 = true
		return se
	}
	if code/100 == 4 && code != http.StatusTooManyRequests &&
		(!e.retryOnAuth || (code != http.StatusUnauthorized && code != http.StatusForbidden)) {
		se.rejected = true
	}
	return se
}

// The 2.0 response headers: what the endpoint stored of a request.
var writtenHeaders = [...]string{
	"X-Prometheus-Remote-Write-Samples-Written",
	"X-Prometheus-Remote-Write-Histograms-Written",
	"X-Prometheus-Remote-Write-Exemplars-Written",
}

// checkWritten reads a 2xx answer's written headers. Without them the
// endpoint read the request as an empty 1.0 one: it goes again as 1.0. A
// 2xx is final, so samples written short are only counted and logged.
func (e *writer) checkWritten(h http.Header, n int, t *pushqueue.Tally) error {
	var written [len(writtenHeaders)]int
	seen := false
	for i, name := range writtenHeaders {
		if v := h.Get(name); v != "" {
			seen = true
			written[i], _ = strconv.Atoi(v)
		}
	}
	if !seen {
		if n == 0 {
			return nil
		}
		return &sendError{cause: "2.0 not understood", toV1: true,
			err: fmt.Errorf("%s answered a remote-write 2.0 request of %d samples with 2xx but no %s header", e.endpoint, n, writtenHeaders[0])}
	}
	if written[0] < n {
		t.NotWritten(n-written[0], fmt.Errorf("%s wrote %d of %d samples (%s: %d, %s: %d)", e.endpoint, written[0], n,
			writtenHeaders[1], written[1], writtenHeaders[2], written[2]))
	}
	return nil
}

// fallBack makes the exporter send 1.0 from now on, and logs it once.
func (e *writer) fallBack(se *sendError) {
	if e.proto.Swap(uint32(translator.ProtocolV1)) == uint32(translator.ProtocolV1) {
		return
	}
	e.logger.Warn("remote_write: the endpoint does not take remote write 2.0; sending 1.0 (prometheus.WriteRequest) from now on, without metadata and start timestamps. Set protobuf_message: prometheus.WriteRequest to start with it",
		zap.String("endpoint", e.endpoint), zap.String("cause", se.cause), zap.Error(se.err))
}

// toV1 re-encodes req's unsent payloads as 1.0; one that does not decode
// is left for the endpoint to reject.
func (e *writer) toV1(req *request) {
	for i := req.next; i < len(req.payloads); i++ {
		if p, err := translator.Downgrade(req.payloads[i]); err == nil {
			req.payloads[i] = p
		}
	}
	req.proto = translator.ProtocolV1
}

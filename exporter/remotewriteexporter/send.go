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
	"strings"
)

// sendError is why one remote-write request did not go through.
type sendError struct {
	// cause groups failures for the rate-limited logs: "connection",
	// "timeout", "http 503", "rejected: http 400".
	cause string
	// rejected: the endpoint refused this request's content; sending it
	// again would be refused again.
	rejected bool
	err      error
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// post sends one compressed WriteRequest. It returns nil when the endpoint
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
	// Only a refusal of this request's content is final: 400, 409, 413,
	// 422 (out-of-order or too old samples, a request too large, a bad
	// label); sending it again would be refused again. Everything else is
	// the endpoint's trouble or a refusal of every request (5xx, 429, 401,
	// 403, 404...): retried, so that the data waits in the queue until the
	// endpoint, its credentials or the URL are fixed.
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
	default:
		return &sendError{cause: fmt.Sprintf("http %d", resp.StatusCode), err: err}
	}
	return &sendError{cause: fmt.Sprintf("rejected: http %d", resp.StatusCode), rejected: true, err: err}
}

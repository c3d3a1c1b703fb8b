// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package deliveryreport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type httpErr int

func (e httpErr) Error() string   { return fmt.Sprintf("answered %d", int(e)) }
func (e httpErr) HTTPStatus() int { return int(e) }

func TestCause(t *testing.T) {
	for want, err := range map[string]error{
		"http 503":         fmt.Errorf("otlp_http_durable: %w", httpErr(503)),
		"grpc Unavailable": status.Error(codes.Unavailable, "down"),
		"connection":       &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED},
		"timeout":          fmt.Errorf("post: %w", context.DeadlineExceeded),
		"error":            errors.New("something else"),
		"tls":              fmt.Errorf("post: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
	} {
		assert.Equal(t, want, Cause(err), "%v", err)
	}
	for _, err := range []error{
		tls.AlertError(42), // bad_certificate: the server refused ours
		x509.CertificateInvalidError{Reason: x509.Expired},
		x509.HostnameError{Host: "backend"},
		status.Error(codes.Unavailable, "connection error: desc = \"transport: authentication handshake failed: tls: bad certificate\""),
	} {
		assert.Equal(t, "tls", Cause(err), "%v", err)
	}
	for want, err := range map[string]error{
		"grpc Unavailable": status.Error(codes.Unavailable, "connection refused"),
	} {
		assert.Equal(t, want, Cause(err), "%v", err)
	}
	for want, err := range map[string]error{
		"disk full":  fmt.Errorf("storing: %w", syscall.ENOSPC),
		"queue full": exporterhelper.ErrQueueIsFull,
		"stopped":    context.Canceled,
		"error":      errors.New("other"),
	} {
		assert.Equal(t, want, QueueCause(err), "%v", err)
	}
}

// One line a minute per message and level, whatever the fields.
func TestSampled(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := Sampled(zap.New(core))
	for i := range 12 {
		l.Info("Exporting failed. Will retry the request after interval.", zap.Int("attempt", i))
		l.Error("Exporting failed. Rejecting data.", zap.Int("attempt", i))
	}
	l.Error("Exporting failed. Dropping data.")
	assert.Equal(t, 3, logs.Len())
	assert.Equal(t, int64(0), logs.All()[0].ContextMap()["attempt"])
}

// An outage: one warning a minute per cause with the backlog; the
// recovery and the end of the backlog once each; refused batches summed.
func TestReportOutage(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	r := New(zap.New(core), "otlp_durable", "gateway:4317")
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	b := Backlog{Size: 100, Sizer: "bytes", Capacity: 1000}
	down := status.Error(codes.Unavailable, "down")
	for range 13 { // a minute of retries every 5 s
		r.Failed(Cause(down), down, 0, b)
		now = now.Add(5 * time.Second)
	}
	r.Failed("http 503", httpErr(503), time.Second, b)
	for range 13 {
		r.NotQueued(fmt.Errorf("put: %w", syscall.ENOSPC), 7, b)
	}
	r.Delivered(7, b)
	r.Settled(Backlog{Size: 50})
	r.Delivered(7, b)
	r.Settled(Backlog{Size: 0})

	failed := logs.FilterMessageSnippet("otlp_durable failed; the batch waits").All()
	require.Len(t, failed, 3, "grpc Unavailable at 0 s and at 60 s, http 503 once")
	assert.Equal(t, "grpc Unavailable", failed[0].ContextMap()["cause"])
	assert.Equal(t, map[string]any{"size": int64(100), "sizer": "bytes", "queue_size": int64(1000)}, failed[0].ContextMap()["queued"])
	assert.Equal(t, 60*time.Second, failed[1].ContextMap()["failing_for"])
	lost := logs.FilterMessageSnippet("not queued").All()
	require.Len(t, lost, 1)
	assert.Equal(t, zapcore.ErrorLevel, lost[0].Level)
	assert.Equal(t, "disk full", lost[0].ContextMap()["cause"])
	assert.Equal(t, int64(1), lost[0].ContextMap()["not_queued_batches_total"])
	assert.Equal(t, int64(13), r.notQueuedBatches, "the next line a minute on says 13")
	assert.Equal(t, 1, logs.FilterMessageSnippet("delivers again").Len())
	done := logs.FilterMessageSnippet("backlog delivered").All()
	require.Len(t, done, 1)
	assert.Equal(t, int64(14), done[0].ContextMap()["items"])
}

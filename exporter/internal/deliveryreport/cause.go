// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package deliveryreport // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// HTTPStatusError is an HTTP answer's error; its status names the cause.
type HTTPStatusError interface {
	error
	HTTPStatus() int
}

// Cause groups a failed send for the logs ("timeout", "http 503", "grpc
// Unavailable", "tls"...).
func Cause(err error) string {
	var hs HTTPStatusError
	if errors.As(err, &hs) {
		return fmt.Sprintf("http %d", hs.HTTPStatus())
	}
	if isTLS(err) {
		return "tls"
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown && st.Code() != codes.OK {
		return "grpc " + st.Code().String()
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, new(*net.OpError)):
		return "connection"
	}
	return "error"
}

// ErrTooLarge marks a batch larger than the whole queue.
var ErrTooLarge = errors.New("larger than the whole queue")

// isTLS: the handshake failed, on either side: a certificate not trusted,
// expired or for another name, or the peer's alert (a client certificate
// refused). gRPC carries it in an Unavailable status's text only.
func isTLS(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
	)
	if errors.As(err, &verify) || errors.As(err, &alert) || errors.As(err, &unknown) ||
		errors.As(err, &invalid) || errors.As(err, &hostname) {
		return true
	}
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), "authentication handshake failed")
}

// QueueCause groups a batch the queue refused ("disk full", "queue full"...).
func QueueCause(err error) string {
	switch {
	case errors.Is(err, ErrTooLarge):
		return "too large"
	case errors.Is(err, syscall.ENOSPC):
		return "disk full"
	case errors.Is(err, exporterhelper.ErrQueueIsFull):
		return "queue full"
	case errors.Is(err, context.Canceled):
		return "stopped"
	}
	return "error"
}

// Sampled returns logger with at most one line a minute per message and level,
// for exporterhelper's per-attempt lines, which Report sums up.
func Sampled(logger *zap.Logger) *zap.Logger {
	return logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewSamplerWithOptions(c, Every, 1, 0)
	}))
}

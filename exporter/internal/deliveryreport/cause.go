// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package deliveryreport // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"

import (
	"context"
	"errors"
	"fmt"
	"net"
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

// Cause groups a failed send for the logs ("timeout", "http 503", "grpc Unavailable"...).
func Cause(err error) string {
	var hs HTTPStatusError
	if errors.As(err, &hs) {
		return fmt.Sprintf("http %d", hs.HTTPStatus())
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

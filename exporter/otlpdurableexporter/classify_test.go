// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestClassify(t *testing.T) {
	throttled, err := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(3 * time.Second)})
	require.NoError(t, err)
	for name, c := range map[string]struct {
		err       error
		permanent bool
		throttle  bool
	}{
		"unavailable":                   {err: status.Error(codes.Unavailable, "x")},
		"deadline":                      {err: status.Error(codes.DeadlineExceeded, "x")},
		"data loss":                     {err: status.Error(codes.DataLoss, "x")},
		"canceled":                      {err: status.Error(codes.Canceled, "x")},
		"aborted":                       {err: status.Error(codes.Aborted, "x")},
		"out of range":                  {err: status.Error(codes.OutOfRange, "x")},
		"invalid argument":              {err: status.Error(codes.InvalidArgument, "x"), permanent: true},
		"unauthenticated":               {err: status.Error(codes.Unauthenticated, "x"), permanent: true},
		"exhausted without retry info":  {err: status.Error(codes.ResourceExhausted, "x"), permanent: true},
		"exhausted with retry info":     {err: throttled.Err(), throttle: true},
		"not a gRPC status (transport)": {err: errors.New("connection reset"), permanent: true},
	} {
		got := classify(c.err, false)
		require.Error(t, got, name)
		require.Equal(t, c.permanent, consumererror.IsPermanent(got), name)
		require.Equal(t, c.throttle, pushqueue.RetryAfter(got) == 3*time.Second, name)
	}
	require.NoError(t, classify(nil, false))
	require.NoError(t, classify(status.Error(codes.OK, ""), false))
}

// retry_on_auth_errors keeps a refused credential's batches in the queue.
func TestClassifyRetriesAuthErrorsWhenAsked(t *testing.T) {
	for _, code := range []codes.Code{codes.Unauthenticated, codes.PermissionDenied} {
		err := status.Error(code, "token expired")
		assert.True(t, consumererror.IsPermanent(classify(err, false)), "%s", code)
		assert.False(t, consumererror.IsPermanent(classify(err, true)), "%s", code)
	}
	assert.True(t, consumererror.IsPermanent(classify(status.Error(codes.InvalidArgument, "bad"), true)))
}

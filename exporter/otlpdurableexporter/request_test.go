// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// What the queue stores reads back as the same request, and the body is
// the batch's ExportMetricsServiceRequest.
func TestEncodingRoundTrip(t *testing.T) {
	e := &otlpDurable{}
	md := batch(3, 40)
	req, err := e.encode(context.Background(), md)
	require.NoError(t, err)
	require.Equal(t, 40, req.ItemsCount())
	stored, err := encoding{}.Marshal(context.Background(), req)
	require.NoError(t, err)
	_, back, err := encoding{}.Unmarshal(stored)
	require.NoError(t, err)
	require.Equal(t, req, back)
	decoded := pmetricotlp.NewExportRequest()
	require.NoError(t, decoded.UnmarshalProto(back.(*request).body))
	require.Equal(t, jsonOf(t, md), jsonOf(t, decoded.Metrics()))
	require.Equal(t, len(back.(*request).body), back.BytesSize())
}

func TestEncodingRejectsDamagedEntries(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":         nil,
		"other version": {9, 1, 0},
		"no name":       {encodingVersion},
		"name too long": {encodingVersion, 5, 'z', 's', 't', 'd'},
		"no count":      {encodingVersion, 0},
		"count too big": {encodingVersion, 0, 0xff, 0xff, 0x03},
		"v1 no count":   {1},
	} {
		_, _, err := encoding{}.Unmarshal(b)
		require.Error(t, err, name)
	}
}

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
		got := classify(c.err)
		require.Error(t, got, name)
		require.Equal(t, c.permanent, consumererror.IsPermanent(got), name)
		require.Equal(t, c.throttle, strings.HasPrefix(got.Error(), "Throttle (3s)"), name)
	}
	require.NoError(t, classify(nil))
	require.NoError(t, classify(status.Error(codes.OK, "")))
}

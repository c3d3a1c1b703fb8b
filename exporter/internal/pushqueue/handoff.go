// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"

	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

type preparedKey struct{}

// Offer puts r in inner's queue. exporterhelper takes pdata only, so r
// rides in the context of an empty batch and the converter returns it.
func Offer(ctx context.Context, inner exporter.Metrics, r xexporterhelper.Request) error {
	return inner.ConsumeMetrics(context.WithValue(ctx, preparedKey{}, r), pmetric.NewMetrics())
}

// Prepared returns the request Offer put in ctx, if it is an R.
func Prepared[R xexporterhelper.Request](ctx context.Context) (R, bool) {
	r, ok := ctx.Value(preparedKey{}).(R)
	return r, ok
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
)

// Settings are what an OTLP exporter built on this package configures.
type Settings struct {
	// Endpoint is as the logs show it (no password).
	Endpoint string
	// Compression is "" (none), Gzip, Zstd or a gRPC compressor's name.
	Compression string
	// MergeWindow of 0 sends each batch alone.
	MergeWindow time.Duration
	// Queue's batcher is not supported.
	Queue configoptional.Optional[exporterhelper.QueueBatchConfig]
	// Retry is done by pushqueue's Sender.
	Retry configretry.BackOffConfig
	// Timeout bounds each attempt (0: Push's client bounds it).
	Timeout time.Duration
	// Push sends a request as stored; errors as pushqueue.Settings.Send.
	Push func(context.Context, *Request) error
	// Start and Shutdown make and close the client.
	Start    func(context.Context, component.Host) error
	Shutdown func(context.Context) error
}

// NewMetrics returns the exporter: pushqueue's core over OTLP requests
// encoded (and compressed) once, before the queue.
func NewMetrics(ctx context.Context, set exporter.Settings, s Settings, opts ...exporterhelper.Option) (exporter.Metrics, error) {
	if !Supported(s.Compression) {
		return nil, fmt.Errorf("%s: no compressor %q", set.ID.Type(), s.Compression)
	}
	send := func(ctx context.Context, r *Request, _ *pushqueue.Tally) error {
		if s.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.Timeout)
			defer cancel()
		}
		return s.Push(ctx, r)
	}
	return pushqueue.New(ctx, pushqueue.Settings[*Request]{
		Exporter: set, Endpoint: s.Endpoint, Queue: s.Queue, Retry: s.Retry,
		Encoding:    Encoding{},
		Encode:      func(md pmetric.Metrics) (*Request, bool, error) { return encodeBatch(md, s.Compression) },
		MergeWindow: s.MergeWindow,
		NewMerger: func(e *pushqueue.Exporter[*Request]) pushqueue.Merger {
			return pushqueue.NewMerging(e, &builder{name: set.ID.Type().String(), compression: s.Compression, bound: e.Bound})
		},
		Send: send, Start: s.Start, Shutdown: s.Shutdown, Options: opts,
	})
}

func encodeBatch(md pmetric.Metrics, compression string) (*Request, bool, error) {
	if md.DataPointCount() == 0 {
		return nil, false, nil
	}
	r, err := Encode(md, compression)
	return r, err == nil, err
}

// Encode returns md's ExportMetricsServiceRequest compressed, as the queue holds it.
func Encode(md pmetric.Metrics, compression string) (*Request, error) {
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		return nil, fmt.Errorf("encoding the batch: %w", err)
	}
	if compression != "" {
		if body, err = Compress(compression, body); err != nil {
			return nil, fmt.Errorf("compressing the batch (%s): %w", compression, err)
		}
	}
	return &Request{Body: body, Compression: compression, Points: md.DataPointCount(), id: pushqueue.NewID()}, nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcencoding "google.golang.org/grpc/encoding"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"
)

// exportMethod is the OTLP metrics service's one method.
const exportMethod = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"

// otlpDurable sends encoded requests over one gRPC connection.
type otlpDurable struct {
	cfg       *Config
	set       exporter.Settings
	userAgent string
	conn      *grpc.ClientConn
	callOpts  []grpc.CallOption
	// compression is what the queue's requests are compressed with.
	compression string
}

func newExporter(ctx context.Context, set exporter.Settings, cfg *Config) (exporter.Metrics, error) {
	compression, err := grpcCompression(cfg.Compression)
	if err != nil {
		return nil, err
	}
	e := &otlpDurable{
		cfg:         cfg,
		set:         set,
		userAgent:   pushqueue.UserAgent(set.BuildInfo),
		compression: compression,
	}
	return otlpqueue.NewMetrics(ctx, set, otlpqueue.Settings{
		Endpoint:    cfg.Endpoint,
		Compression: compression,
		MergeWindow: cfg.MergeWindow,
		Queue:       cfg.QueueConfig,
		Retry:       cfg.RetryConfig,
		Timeout:     cfg.TimeoutConfig.Timeout,
		Push:        e.push,
		Start:       e.start,
		Shutdown:    e.shutdown,
	}, exporterhelper.WithAttrs(endpointAttributes(cfg.Endpoint)...))
}

// endpointAttributes name the server in the exporter's telemetry, as otlp_grpc's.
func endpointAttributes(endpoint string) []attribute.KeyValue {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return []attribute.KeyValue{attribute.String("server.address", endpoint)}
	}
	return otlpqueue.ServerAttributes(host, port)
}

// start dials in the background: a server down fails sends, not the start.
func (e *otlpDurable) start(ctx context.Context, host component.Host) error {
	// The requests are compressed already (precompressed).
	cc := e.cfg.ClientConfig
	cc.Compression = "" // none
	opts := []configgrpc.ToClientConnOption{
		configgrpc.WithGrpcDialOption(grpc.WithUserAgent(e.userAgent)),
		// A pool gains nothing at one request every few seconds (docs/performance-memory.md).
		configgrpc.WithGrpcDialOption(experimental.WithBufferPool(mem.NopBufferPool{})),
	}
	if e.compression != "" {
		//lint:ignore SA1019 grpc.WithCompressor ("supported throughout 1.x") is the one way to send a message compressed beforehand: see precompressed.
		opts = append(opts, configgrpc.WithGrpcDialOption(grpc.WithCompressor(precompressed(e.compression))))
	}
	creds, err := tlsreload.GRPCDialOption(ctx, cc.TLS, e.set.Logger)
	if err != nil {
		return err
	}
	if creds != nil {
		opts = append(opts, configgrpc.WithGrpcDialOption(creds))
	}
	conn, err := cc.ToClientConn(ctx, host.GetExtensions(), e.set.TelemetrySettings, opts...)
	if err != nil {
		return err
	}
	// configgrpc's interceptor adds the configured headers.
	e.conn = conn
	e.callOpts = []grpc.CallOption{
		grpc.WaitForReady(e.cfg.ClientConfig.WaitForReady),
		grpc.ForceCodecV2(rawCodec{}),
	}
	return nil
}

func (e *otlpDurable) shutdown(context.Context) error {
	if e.conn == nil {
		return nil
	}
	return e.conn.Close()
}

// push sends one encoded request and classifies the answer as otlp_grpc does.
func (e *otlpDurable) push(ctx context.Context, r *otlpqueue.Request) error {
	if e.conn == nil {
		return errors.New("otlp_durable: exporter not started")
	}
	body, opts := r.Body, e.callOpts
	if r.Compression != e.compression {
		// Stored with another compression: gRPC compresses it with this one's.
		raw, err := otlpqueue.Decompress(r.Compression, r.Body)
		if err != nil {
			return consumererror.NewPermanent(fmt.Errorf("otlp_durable: a stored request (%s) does not decompress: %w", r.Compression, err))
		}
		body = raw
		opts = append(slices.Clip(opts), grpc.UseCompressor(cmp.Or(e.compression, grpcencoding.Identity)))
	}
	resp := pmetricotlp.NewExportResponse()
	if err := classify(e.conn.Invoke(ctx, exportMethod, rawMessage(body), &resp, opts...), e.cfg.RetryOnAuthErrors); err != nil {
		return err
	}
	if ps := resp.PartialSuccess(); ps.ErrorMessage() != "" || ps.RejectedDataPoints() != 0 {
		e.set.Logger.Warn("Partial success response",
			zap.String("message", ps.ErrorMessage()),
			zap.Int64("dropped_data_points", ps.RejectedDataPoints()))
	}
	return nil
}

// classify maps a gRPC status to retryable, throttled or permanent, as
// otlp_grpc; retryOnAuth keeps Unauthenticated and PermissionDenied retried.
func classify(err error, retryOnAuth bool) error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	var retryInfo *errdetails.RetryInfo
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			retryInfo = ri
			break
		}
	}
	switch st.Code() {
	case codes.OK:
		return nil
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange, codes.Unavailable, codes.DataLoss:
	case codes.Unauthenticated, codes.PermissionDenied:
		if !retryOnAuth {
			return consumererror.NewPermanent(err)
		}
	case codes.ResourceExhausted:
		if retryInfo == nil {
			return consumererror.NewPermanent(err)
		}
	default:
		return consumererror.NewPermanent(err)
	}
	if d := retryInfo.GetRetryDelay().AsDuration(); d > 0 {
		return pushqueue.NewRetryAfter(err, d)
	}
	return err
}

type rawMessage []byte

// rawCodec sends a rawMessage as it is; named "proto" so that every gRPC
// server takes its content type.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(rawMessage)
	if !ok {
		return nil, fmt.Errorf("otlp_durable: cannot send a %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	resp, ok := v.(*pmetricotlp.ExportResponse)
	if !ok {
		return fmt.Errorf("otlp_durable: cannot decode into a %T", v)
	}
	return resp.UnmarshalProto(data.Materialize())
}

func (rawCodec) Name() string { return "proto" }

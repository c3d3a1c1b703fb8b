// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"
)

// maxResponseBytes is otlp_http's bound on what is read of an answer.
const maxResponseBytes = 64 << 10

// otlpHTTPDurable POSTs encoded requests to one URL.
type otlpHTTPDurable struct {
	cfg *Config
	set exporter.Settings
	url string
	// shownURL, with any password redacted, is what errors and logs name.
	shownURL  string
	userAgent string
	client    *http.Client
	// compression is the queue's and Content-Encoding's ("": none).
	compression string
}

func newExporter(ctx context.Context, set exporter.Settings, cfg *Config) (exporter.Metrics, error) {
	u, err := cfg.metricsURL()
	if err != nil {
		return nil, err
	}
	compression, err := cfg.compression()
	if err != nil {
		return nil, err
	}
	e := &otlpHTTPDurable{
		cfg:         cfg,
		set:         set,
		url:         u.String(),
		shownURL:    u.Redacted(),
		userAgent:   pushqueue.UserAgent(set.BuildInfo),
		compression: compression,
	}
	attrs := append(otlpqueue.ServerAttributes(u.Hostname(), u.Port()), attribute.String("url.path", u.Path))
	return otlpqueue.NewMetrics(ctx, set, otlpqueue.Settings{
		Endpoint:    e.shownURL,
		Compression: compression,
		MergeWindow: cfg.MergeWindow,
		Queue:       cfg.QueueConfig,
		// The client's timeout bounds each attempt, as otlp_http's.
		Retry:    cfg.RetryConfig,
		Push:     e.push,
		Start:    e.start,
		Shutdown: e.shutdown,
	}, exporterhelper.WithAttrs(attrs...))
}

// start makes the client without compression: the requests are compressed already.
func (e *otlpHTTPDurable) start(ctx context.Context, host component.Host) error {
	cc := e.cfg.ClientConfig
	cc.Compression = ""
	client, err := tlsreload.HTTPClient(ctx, cc, host, e.set.TelemetrySettings)
	if err != nil {
		return err
	}
	e.client = client
	return nil
}

func (e *otlpHTTPDurable) shutdown(context.Context) error {
	if e.client != nil {
		e.client.CloseIdleConnections()
	}
	return nil
}

// push POSTs one request as stored; the answer is classified as the
// OTLP/HTTP specification says (classify), and a failure to reach the server retried.
func (e *otlpHTTPDurable) push(ctx context.Context, r *otlpqueue.Request) error {
	if e.client == nil {
		return errors.New("otlp_http_durable: exporter not started")
	}
	body := r.Body
	if r.Compression != e.compression {
		// Stored with another compression: sent with this one's.
		raw, err := otlpqueue.Decompress(r.Compression, r.Body)
		if err == nil && e.compression != "" {
			raw, err = otlpqueue.Compress(e.compression, raw)
		}
		if err != nil {
			return consumererror.NewPermanent(fmt.Errorf("otlp_http_durable: a stored request (%s) does not convert to %q: %w", r.Compression, e.compression, err))
		}
		body = raw
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.compression != "" {
		req.Header.Set("Content-Encoding", e.compression)
	}
	req.Header.Set("User-Agent", e.userAgent)
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp_http_durable: %w", err)
	}
	defer func() {
		_, _ = io.CopyN(io.Discard, resp.Body, maxResponseBytes)
		_ = resp.Body.Close()
	}()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode/100 == 2 {
		e.partialSuccess(resp, answer)
		return nil
	}
	return classify(resp, answer, e.shownURL, e.cfg.RetryOnAuthErrors)
}

// partialSuccess logs the rejected points of a 2xx answer, as otlp_http does.
func (e *otlpHTTPDurable) partialSuccess(resp *http.Response, answer []byte) {
	if len(answer) == 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") {
		return
	}
	out := pmetricotlp.NewExportResponse()
	if err := out.UnmarshalProto(answer); err != nil {
		e.set.Logger.Warn("otlp_http_durable: the server's answer does not decode", zap.Error(err))
		return
	}
	if ps := out.PartialSuccess(); ps.ErrorMessage() != "" || ps.RejectedDataPoints() != 0 {
		e.set.Logger.Warn("Partial success response",
			zap.String("message", ps.ErrorMessage()),
			zap.Int64("dropped_data_points", ps.RejectedDataPoints()))
	}
}

// classify retries 429, 502, 503 and 504 (429 and 503 after Retry-After), as
// the OTLP/HTTP specification says, and 401 and 403 with retry_on_auth_errors;
// any other status is permanent. Prometheus
// answers text, OTLP/HTTP servers a protobuf Status.
func classify(resp *http.Response, answer []byte, url string, retryOnAuth bool) error {
	msg := strings.TrimSpace(string(answer[:min(len(answer), 512)]))
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") {
		var st spb.Status
		if err := proto.Unmarshal(answer, &st); err != nil {
			msg = fmt.Sprintf("(a Status of %d bytes that does not decode: %v)", len(answer), err)
		} else {
			msg = st.GetMessage()
		}
	}
	err := fmt.Errorf("otlp_http_durable: %s answered %s", url, resp.Status)
	if msg != "" {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	err = &statusError{status: resp.StatusCode, err: err}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return pushqueue.RetryAfterHeader(err, resp.Header.Get("Retry-After"), time.Now())
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return err
	case http.StatusUnauthorized, http.StatusForbidden:
		if retryOnAuth {
			return err
		}
	}
	return consumererror.NewPermanent(err)
}

// statusError's status is its cause in the delivery logs (deliveryreport.Cause).
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string   { return e.err.Error() }
func (e *statusError) Unwrap() error   { return e.err }
func (e *statusError) HTTPStatus() int { return e.status }

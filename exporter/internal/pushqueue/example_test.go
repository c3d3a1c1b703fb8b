// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushtest"
)

// The smallest push backend (README.md, A new backend): each gauge point as
// a line "<name> <value>" POSTed over HTTP. What it writes is its request,
// its encoding, its send and its answers' classification; the queue, the
// retries, the drop policy, the restart order and the counts are the core's.

// lines is the backend's request: a batch's lines, ready to send.
type lines struct {
	body   []byte
	points int
	id     uint64
}

func (r *lines) ID() uint64      { return r.id }
func (r *lines) ItemsCount() int { return r.points }
func (r *lines) BytesSize() int  { return len(r.body) }
func (r *lines) MergeSplit(context.Context, int, exporterhelper.RequestSizerType, xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	return []xexporterhelper.Request{r}, nil
}

// linesEncoding stores a request as its ID and point count (uvarints), then its body.
type linesEncoding struct{}

func (linesEncoding) Marshal(r *lines) ([]byte, error) {
	return append(binary.AppendUvarint(binary.AppendUvarint(nil, r.id), uint64(r.points)), r.body...), nil
}

func (linesEncoding) Unmarshal(b []byte) (*lines, error) {
	id, n := binary.Uvarint(b)
	points, m := binary.Uvarint(b[max(n, 0):])
	if n <= 0 || m <= 0 {
		return nil, errors.New("lines: a stored request without its header")
	}
	return &lines{id: id, points: int(points), body: b[n+m:]}, nil
}

func encodeLines(md pmetric.Metrics) (*lines, bool, error) {
	var body bytes.Buffer
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		ms := rms.At(i).ScopeMetrics().At(0).Metrics()
		for j := range ms.Len() {
			dps := ms.At(j).Gauge().DataPoints()
			for k := range dps.Len() {
				fmt.Fprintf(&body, "%s %d\n", ms.At(j).Name(), dps.At(k).IntValue())
			}
		}
	}
	return &lines{body: body.Bytes(), points: md.DataPointCount(), id: pushqueue.NewID()}, body.Len() > 0, nil
}

// statusError names a failure by its HTTP status (the cause, and the `reason` label).
type statusError struct{ status int }

func (e statusError) Error() string   { return "answered " + strconv.Itoa(e.status) }
func (e statusError) HTTPStatus() int { return e.status }

// sendLines POSTs a request: 2xx is sent, 429/503 retried after Retry-After,
// other 5xx retried, other 4xx rejected.
func sendLines(url string) func(context.Context, *lines, *pushqueue.Tally) error {
	return func(ctx context.Context, r *lines, _ *pushqueue.Tally) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(r.body))
		if err != nil {
			return consumererror.NewPermanent(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err // connection: retried
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		switch code := resp.StatusCode; {
		case code/100 == 2:
			return nil
		case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
			return pushqueue.RetryAfterHeader(statusError{code}, resp.Header.Get("Retry-After"), time.Now())
		case code/100 == 5:
			return statusError{code}
		default:
			return consumererror.NewPermanent(statusError{code})
		}
	}
}

func newLinesExporter(set exporter.Settings, url string, q exporterhelper.QueueBatchConfig, retry configretry.BackOffConfig) (*pushqueue.Exporter[*lines], error) {
	return pushqueue.New(context.Background(), pushqueue.Settings[*lines]{
		Exporter: set, Endpoint: url, Queue: configoptional.Some(q), Retry: retry,
		Encoding: linesEncoding{}, Encode: encodeLines, Send: sendLines(url),
	})
}

// decodeLines is the test endpoint's side: a batch number is a line's value.
func decodeLines(_ *http.Request, body []byte) ([]int, int, error) {
	var values []int64
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		_, v, ok := strings.Cut(line, " ")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			return nil, 0, fmt.Errorf("line %q", line)
		}
		values = append(values, n)
	}
	return pushtest.Batches(values), len(values), nil
}

// The example backend follows the push policy as the shipped exporters do.
func TestExampleBackendFollowsThePolicy(t *testing.T) {
	pushtest.RunPolicy(t, func(t *testing.T) pushtest.Target {
		ep := pushtest.NewHTTPEndpoint(t, "/lines", decodeLines)
		return pushtest.Target{Endpoint: ep, Rejected: "http_400", Dates: true,
			Start: func(t *testing.T, q exporterhelper.QueueBatchConfig, retry configretry.BackOffConfig, host component.Host) (exporter.Metrics, *observer.ObservedLogs) {
				set, logs := otlptest.Settings(component.MustNewType("lines"))
				e, err := newLinesExporter(set, ep.URL(), q, retry)
				if err != nil {
					t.Fatal(err)
				}
				if err := e.Start(context.Background(), host); err != nil {
					t.Fatal(err)
				}
				return e, logs
			}}
	})
}

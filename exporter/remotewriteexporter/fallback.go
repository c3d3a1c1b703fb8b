// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"go.uber.org/zap"
)

// The 2.0 response headers: what the endpoint stored of a request.
var writtenHeaders = [...]string{
	"X-Prometheus-Remote-Write-Samples-Written",
	"X-Prometheus-Remote-Write-Histograms-Written",
	"X-Prometheus-Remote-Write-Exemplars-Written",
}

// checkWritten reads a 2xx answer's written headers. Without them the
// endpoint read the request as an empty 1.0 one: it goes again as 1.0. A
// 2xx is final, so samples written short are only counted and logged.
func (e *writer) checkWritten(h http.Header, n int) error {
	var written [len(writtenHeaders)]int
	seen := false
	for i, name := range writtenHeaders {
		if v := h.Get(name); v != "" {
			seen = true
			written[i], _ = strconv.Atoi(v)
		}
	}
	if !seen {
		if n == 0 {
			return nil
		}
		return &sendError{cause: "2.0 not understood", toV1: true,
			err: fmt.Errorf("%s answered a remote-write 2.0 request of %d samples with 2xx but no %s header", e.endpoint, n, writtenHeaders[0])}
	}
	if written[0] < n {
		e.report.NotStored(n-written[0], fmt.Errorf("%s wrote %d of %d samples (%s: %d, %s: %d)", e.endpoint, written[0], n,
			writtenHeaders[1], written[1], writtenHeaders[2], written[2]))
	}
	return nil
}

// fallBack makes the exporter send 1.0 from now on, and logs it once.
func (e *writer) fallBack(se *sendError) {
	if e.proto.Swap(uint32(protocolV1)) == uint32(protocolV1) {
		return
	}
	e.logger.Warn("remote_write: the endpoint does not take remote write 2.0; sending 1.0 (prometheus.WriteRequest) from now on, without metadata and start timestamps. Set protobuf_message: prometheus.WriteRequest to start with it",
		zap.String("endpoint", e.endpoint), zap.String("cause", se.cause), zap.Error(se.err))
}

// toV1 re-encodes req's unsent payloads as 1.0; one that does not decode
// is left for the endpoint to reject.
func (e *writer) toV1(req *request) {
	for i := req.next; i < len(req.payloads); i++ {
		if p, err := downgrade(req.payloads[i]); err == nil {
			req.payloads[i] = p
		}
	}
	req.proto = protocolV1
}

// downgrade returns a 2.0 request as 1.0, without metadata and start timestamps.
func downgrade(payload []byte) ([]byte, error) {
	raw, err := snappy.Decode(nil, payload)
	if err != nil {
		return nil, err
	}
	var v2 writev2.Request
	if err := v2.Unmarshal(raw); err != nil {
		return nil, err
	}
	v1 := prompb.WriteRequest{Timeseries: make([]prompb.TimeSeries, len(v2.Timeseries))}
	for i, ts := range v2.Timeseries {
		if len(ts.LabelsRefs)%2 != 0 {
			return nil, fmt.Errorf("series %d: an odd number of label references", i)
		}
		out := &v1.Timeseries[i]
		for j := 0; j < len(ts.LabelsRefs); j += 2 {
			name, value := ts.LabelsRefs[j], ts.LabelsRefs[j+1]
			if int(max(name, value)) >= len(v2.Symbols) {
				return nil, fmt.Errorf("series %d: a label reference past the %d symbols", i, len(v2.Symbols))
			}
			out.Labels = append(out.Labels, prompb.Label{Name: v2.Symbols[name], Value: v2.Symbols[value]})
		}
		for _, s := range ts.Samples {
			out.Samples = append(out.Samples, prompb.Sample{Value: s.Value, Timestamp: s.Timestamp})
		}
	}
	b, err := v1.Marshal()
	if err != nil {
		return nil, err
	}
	return snappy.Encode(nil, b), nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"fmt"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
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
	if e.proto.Swap(uint32(translator.ProtocolV1)) == uint32(translator.ProtocolV1) {
		return
	}
	e.logger.Warn("remote_write: the endpoint does not take remote write 2.0; sending 1.0 (prometheus.WriteRequest) from now on, without metadata and start timestamps. Set protobuf_message: prometheus.WriteRequest to start with it",
		zap.String("endpoint", e.endpoint), zap.String("cause", se.cause), zap.Error(se.err))
}

// toV1 re-encodes req's unsent payloads as 1.0; one that does not decode
// is left for the endpoint to reject.
func (e *writer) toV1(req *request) {
	for i := req.next; i < len(req.payloads); i++ {
		if p, err := translator.Downgrade(req.payloads[i]); err == nil {
			req.payloads[i] = p
		}
	}
	req.proto = translator.ProtocolV1
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushtest // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushtest"

import (
	"net/http"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"
)

// OTLPBatches returns md's batch numbers (its gauge values) and points.
func OTLPBatches(md pmetric.Metrics) ([]int, int) {
	var values []int64
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				dps := ms.At(k).Gauge().DataPoints()
				for l := range dps.Len() {
					values = append(values, dps.At(l).IntValue())
				}
			}
		}
	}
	return Batches(values), md.DataPointCount()
}

// DecodeOTLPHTTP reads an OTLP/HTTP protobuf request, compressed as its Content-Encoding says.
func DecodeOTLPHTTP(r *http.Request, body []byte) ([]int, int, error) {
	raw, err := otlpqueue.Decompress(r.Header.Get("Content-Encoding"), body)
	if err != nil {
		return nil, 0, err
	}
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(raw); err != nil {
		return nil, 0, err
	}
	batches, points := OTLPBatches(req.Metrics())
	return batches, points, nil
}

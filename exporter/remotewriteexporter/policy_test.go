// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"net/http"
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlptest"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushtest"
)

// decodeWriteRequest reads a 1.0 request: a batch number is a sample's value.
func decodeWriteRequest(_ *http.Request, body []byte) ([]int, int, error) {
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, 0, err
	}
	var wr prompb.WriteRequest
	if err := wr.Unmarshal(raw); err != nil {
		return nil, 0, err
	}
	var values []int64
	for _, ts := range wr.Timeseries {
		for _, s := range ts.Samples {
			values = append(values, int64(s.Value))
		}
	}
	return pushtest.Batches(values), len(values), nil
}

// The push policy, as the other push exporters follow it.
func TestPushPolicy(t *testing.T) {
	pushtest.RunPolicy(t, func(t *testing.T) pushtest.Target {
		ep := pushtest.NewHTTPEndpoint(t, "/api/v1/write", decodeWriteRequest)
		return pushtest.Target{Endpoint: ep, Rejected: "http_400", Dates: true, Start: func(t *testing.T, q exporterhelper.QueueBatchConfig, retry configretry.BackOffConfig, host component.Host) (exporter.Metrics, *observer.ObservedLogs) {
			cfg := testConfig(ep.URL())
			cfg.QueueConfig = configoptional.Some(q)
			cfg.BackOffConfig = retry
			return otlptest.Start(t, NewFactory(), cfg, host)
		}}
	})
}

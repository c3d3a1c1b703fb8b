// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpdurableexporter

import (
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushtest"
)

// The push policy, as the other push exporters follow it.
func TestPushPolicy(t *testing.T) {
	pushtest.RunPolicy(t, func(t *testing.T) pushtest.Target {
		ep := pushtest.NewHTTPEndpoint(t, "", pushtest.DecodeOTLPHTTP)
		return pushtest.Target{Endpoint: ep, Rejected: "http_400", Dates: true, Start: func(t *testing.T, q exporterhelper.QueueBatchConfig, retry configretry.BackOffConfig, host component.Host) (exporter.Metrics, *observer.ObservedLogs) {
			cfg := testConfig(ep.URL())
			cfg.QueueConfig = configoptional.Some(q)
			cfg.RetryConfig = retry
			return start(t, cfg, host)
		}}
	})
}

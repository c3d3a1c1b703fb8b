// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"strconv"

	"go.opentelemetry.io/otel/attribute"
)

// ServerAttributes name the server in the exporter's own telemetry, as otlp_grpc's do.
func ServerAttributes(host, port string) []attribute.KeyValue {
	out := []attribute.KeyValue{attribute.String("server.address", host)}
	if p, err := strconv.Atoi(port); err == nil {
		out = append(out, attribute.Int("server.port", p))
	}
	return out
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package otlpqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/otlpqueue"

import (
	"strconv"

	"go.opentelemetry.io/otel/attribute"
)

// ServerAttributes are the attributes of an exporter's own telemetry
// (otelcol_exporter_*) naming its server, as otlp_grpc's and otlp_http's:
// server.address, and server.port when port is a number.
func ServerAttributes(host, port string) []attribute.KeyValue {
	out := []attribute.KeyValue{attribute.String("server.address", host)}
	if p, err := strconv.Atoi(port); err == nil {
		out = append(out, attribute.Int("server.port", p))
	}
	return out
}

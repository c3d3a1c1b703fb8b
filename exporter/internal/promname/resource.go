package promname // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/promname"

import (
	"iter"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// ResourceToTelemetrySettings is the resource_to_telemetry_conversion
// setting, named and shaped as contrib's Prometheus exporters have it.
type ResourceToTelemetrySettings struct {
	// Enabled makes every attribute of a resource a label of each of its
	// series: the receiver's ernic.id and role, which the metric contract
	// has as the labels ernic_id and role, and whatever a processor adds
	// (host.name from resourcedetection, for example).
	Enabled bool `mapstructure:"enabled"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Attributes yields the attributes that become a point's labels: those of
// its resource when promote is true, then its own, but not one whose key
// the resource has (the resource's value wins, as contrib's
// resource_to_telemetry_conversion copies resource attributes over point
// attributes).
func Attributes(res pcommon.Map, promote bool, attrs pcommon.Map) iter.Seq2[string, pcommon.Value] {
	return func(yield func(string, pcommon.Value) bool) {
		if promote {
			for k, v := range res.All() {
				if !yield(k, v) {
					return
				}
			}
		}
		for k, v := range attrs.All() {
			if promote && res.Len() > 0 {
				if _, ok := res.Get(k); ok {
					continue
				}
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"github.com/golang/snappy"
	prw "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/prometheusremotewrite"
	"github.com/prometheus/prometheus/prompb"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// translator turns a batch of metrics into compressed remote-write requests.
type translator struct {
	settings prw.Settings
	maxBytes int
}

func newTranslator(cfg *Config) *translator {
	return &translator{
		settings: prw.Settings{
			ExternalLabels: cfg.ExternalLabels,
			// The names and labels of the Prometheus exporter with the
			// same strategy: escaped to [a-zA-Z0-9_], unit and _total
			// suffixes; no otel_scope_* labels and no target_info series.
			TranslationStrategy: "UnderscoreEscapingWithSuffixes",
			AddMetricSuffixes:   true,
			DisableScopeInfo:    true,
			DisableTargetInfo:   true,
		},
		maxBytes: cfg.MaxBatchSizeBytes,
	}
}

// translate returns md as remote-write requests of at most maxBytes each
// (before compression), with the translation error of the points it could
// not translate (the rest is in the request).
func (t *translator) translate(md pmetric.Metrics) (*request, error) {
	series, err := prw.FromMetrics(md, t.settings)
	var payloads [][]byte
	var samples []int
	var wr prompb.WriteRequest
	size, n := 0, 0
	flush := func() error {
		if len(wr.Timeseries) == 0 {
			return nil
		}
		raw, err := wr.Marshal()
		if err != nil {
			return err
		}
		payloads = append(payloads, snappy.Encode(nil, raw))
		samples = append(samples, n)
		wr.Timeseries = wr.Timeseries[:0]
		size, n = 0, 0
		return nil
	}
	for _, ts := range series {
		// Each series is a length-delimited field of the request: its
		// size plus the tag and the length prefix (at most 1+5 bytes).
		s := ts.Size() + 6
		if size+s > t.maxBytes {
			if ferr := flush(); ferr != nil {
				return nil, ferr
			}
		}
		wr.Timeseries = append(wr.Timeseries, *ts)
		size += s
		n += len(ts.Samples)
	}
	if ferr := flush(); ferr != nil {
		return nil, ferr
	}
	return newRequest(payloads, samples), err
}

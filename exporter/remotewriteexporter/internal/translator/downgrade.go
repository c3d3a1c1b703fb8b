// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"

import (
	"fmt"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// Downgrade returns a 2.0 request as 1.0, without metadata and start timestamps.
func Downgrade(payload []byte) ([]byte, error) {
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

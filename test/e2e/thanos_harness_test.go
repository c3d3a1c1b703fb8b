// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// tenantSeries returns the series of v by harness.SeriesKey without the
// tenant label, with their values, and a problem for each series whose
// tenant is not tenant or that still carries a replica label (not
// deduplicated).
func tenantSeries(v model.Vector, tenant string) (map[string]float64, []string) {
	out := map[string]float64{}
	var problems []string
	for _, s := range v {
		m := s.Metric.Clone()
		if got := string(m["tenant_id"]); got != tenant {
			problems = append(problems, fmt.Sprintf("tenant_id %q, want %q: %v", got, tenant, s.Metric))
		}
		if _, ok := m[harness.ThanosReplicaLabel]; ok {
			problems = append(problems, "not deduplicated: "+s.Metric.String())
		}
		delete(m, "tenant_id")
		out[harness.SeriesKey(m)] = float64(s.Value)
	}
	return out, problems
}

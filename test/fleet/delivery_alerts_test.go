// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The delivery rules of dashboards/alerts.yaml (group rocm-ernic-delivery),
// evaluated by the ruler on the hosts' own record of their delivery.
var (
	// drainAlerts see an outage: a host that has sent nothing (silent) and
	// one whose newest record shows it draining its backlog (behind).
	drainAlerts = []string{"ErnicDeliverySilent", "ErnicDeliveryBehind"}
	// lossAlerts see data lost or about to be: none may fire, the hosts
	// drop and have rejected nothing (the host an hour ahead reaches the
	// backend with nothing, its record included).
	lossAlerts = []string{"ErnicDeliveryDropping", "ErnicDeliveryRejected", "ErnicDeliveryQueueNearFull"}
)

// checkDeliveryAlerts: after the outage, the host told to wait a day is
// silent (ErnicDeliverySilent) while the backend hears nothing from it,
// hosts draining their backlog are behind (ErnicDeliveryBehind), each
// resolves once its host has caught up (its record arrives every 15 s:
// the slack), and no loss alert fires for any host.
func checkDeliveryAlerts(ctx context.Context, t *testing.T, w *harness.AlertWatch[alertKey], b *backend, f *fleet, o *outage, c *catchUp, steadyFrom time.Time) {
	t.Helper()
	firedFor := checkOutageAlerts(ctx, t, w, b, f, o, c, steadyFrom, drainAlerts, 2*telemetryEvery)
	if day := f.faults["retry-after-day"].name; !slices.Contains(firedFor["ErnicDeliverySilent"], day) {
		t.Errorf("ErnicDeliverySilent did not fire for %s, which sent nothing for %v after the backend was back", day, maxRetryAfter-o.length())
	}
	if len(firedFor["ErnicDeliveryBehind"]) == 0 {
		t.Errorf("ErnicDeliveryBehind fired for no host while %d hosts drained their backlogs for up to %v", len(f.regular()), c.fleet.Round(time.Second))
	}
	for _, k := range w.Keys() {
		if slices.Contains(lossAlerts, k.name) {
			t.Errorf("%v was active: %+v", k, w.Cycles(k))
		}
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package selftelemetryreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver"

import (
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Two selftelemetry receivers of one collector that publish under the same
// identity would write every delivery series twice, with the same labels:
// a backend refuses or interleaves the second copy. The collector shares
// one receiver among all the pipelines that list it, so a second one is
// never needed; the identities in use are kept here to refuse it at start.
var (
	claimsMu sync.Mutex
	claims   = map[string]component.ID{}
)

// identity is what tells the series of two receivers apart: the host.name
// resource attribute, which becomes the `instance` label, or its absence.
func identity(hostNameEnabled bool, hostName string) string {
	if !hostNameEnabled {
		return "without host.name"
	}
	return fmt.Sprintf("with host.name %q", hostName)
}

// claim takes ident for id, or says which receiver holds it.
func claim(id component.ID, ident string) (release func(), err error) {
	claimsMu.Lock()
	defer claimsMu.Unlock()
	if other, ok := claims[ident]; ok && other != id {
		return nil, fmt.Errorf("receiver %s already publishes this collector's delivery series %s; "+
			"%s would publish the same series again, and the backend would get each one twice: "+
			"list the one receiver %s in every pipeline that needs it (the collector shares it among them)",
			other, ident, id, other)
	}
	claims[ident] = id
	return func() {
		claimsMu.Lock()
		defer claimsMu.Unlock()
		if claims[ident] == id {
			delete(claims, ident)
		}
	}, nil
}

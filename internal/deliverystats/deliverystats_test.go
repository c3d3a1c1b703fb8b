// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package deliverystats

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRegisterAndUnregister(t *testing.T) {
	unB := Register(func() Snapshot { return Snapshot{Exporter: "remote_write/b", PointsSent: 2} })
	unA := Register(func() Snapshot { return Snapshot{Exporter: "otlp_durable", PointsSent: 1} })
	got := All()
	assert.Equal(t, []string{"otlp_durable", "remote_write/b"}, []string{got[0].Exporter, got[1].Exporter})
	assert.Equal(t, int64(1), got[0].PointsSent)
	unA()
	got = All()
	assert.Len(t, got, 1)
	assert.Equal(t, "remote_write/b", got[0].Exporter)
	unB()
	unB() // twice is harmless
	assert.Empty(t, All())
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// receivers reads the receivers section of a configuration file.
func receivers(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var c struct {
		Receivers map[string]map[string]any `yaml:"receivers"`
	}
	require.NoError(t, yaml.Unmarshal(b, &c))
	return c.Receivers
}

// The fleet profile's push receiver (ernic/fleet) reads what each push
// configuration's receiver reads, as often and with the same host name:
// only its metrics differ. A push configuration whose receiver settings
// change without the overlay's would push from a receiver set otherwise.
func TestFleetReceiverHasThePushReceiverSettings(t *testing.T) {
	fleet := receivers(t, "../../config/fleet.yaml")["ernic/fleet"]
	require.NotNil(t, fleet, "config/fleet.yaml: no ernic/fleet receiver")
	delete(fleet, "metrics")
	for _, push := range []string{"prometheus-remote-write.yaml", "otlp.yaml", "otlphttp.yaml"} {
		ernic := receivers(t, "../../config/"+push)["ernic"]
		require.NotNil(t, ernic, "config/%s: no ernic receiver", push)
		assert.Equal(t, ernic, fleet, "config/fleet.yaml's ernic/fleet (metrics aside) against config/%s's ernic", push)
	}
}

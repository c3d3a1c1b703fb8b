// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseManifest(t *testing.T) {
	m, err := ParseManifest(readTestdata(t, "rundir/basic/instances.json"))
	require.NoError(t, err)
	assert.Empty(t, m.Problems)
	require.Len(t, m.Instances, 3)

	assert.Equal(t, Instance{ID: 1, Role: "manager", PID: 4100, MAC: "02:aa:00:00:00:01"}, m.Instances[0])
	assert.Equal(t, "1.stats", m.Instances[0].StatsFile())

	w := m.Instances[1]
	assert.Equal(t, int64(2), w.ID)
	assert.Equal(t, "worker", w.Role)
	assert.Equal(t, 4117, w.PID)
	require.NotNil(t, w.VM)
	assert.Equal(t, VM{Attached: true, Name: "train-a", PID: 5230, LaunchedAt: 1767225600.25, HasLaunchedAt: true, GPU: "0000:c1:00.0"}, *w.VM)

	h := m.Instances[2]
	assert.Equal(t, "unknown", h.Role, "a hand-written entry without role")
	assert.Equal(t, "02:AA:00:00:00:03", h.MAC, "case kept")
	assert.Equal(t, VM{}, *h.VM, "detached VM, keys absent")
}

func TestParseManifestEmptyStart(t *testing.T) {
	m, err := ParseManifest([]byte(`{"instances":[]}`))
	require.NoError(t, err)
	assert.Empty(t, m.Instances)
	assert.Empty(t, m.Problems)
}

func TestParseManifestBadEntries(t *testing.T) {
	m, err := ParseManifest([]byte(`{"instances": [
		{"id": 1, "pid": 10},
		{"id": "2", "pid": 11},
		{"pid": 12},
		{"id": 0, "pid": 13},
		{"id": 1, "pid": 14},
		{"id": 5, "pid": 15, "vm": {"vm_pid": "x", "attached": "true", "gpu": ["a"], "vm_name": "n"}},
		{"id": 6, "pid": -1, "vm": null},
		{"id": 7, "pid": 17.5, "mac": 5, "role": "worker", "ID": 9}
	]}`))
	require.NoError(t, err)
	var ids []int64
	for _, i := range m.Instances {
		ids = append(ids, i.ID)
	}
	assert.Equal(t, []int64{1, 5, 6, 7}, ids)
	assert.Equal(t, 10, m.Instances[0].PID, "the first entry of a duplicated id wins")
	assert.Equal(t, 15, m.Instances[1].PID, "a bad vm key costs that key, not the entry")
	assert.Equal(t, VM{Name: "n"}, *m.Instances[1].VM)
	assert.Equal(t, 0, m.Instances[2].PID, "a negative pid is no pid, reported")
	assert.Equal(t, Instance{ID: 7, Role: "worker"}, m.Instances[3], "keys are matched exactly; bad pid and mac ignored")
	var msgs []string
	for _, p := range m.Problems {
		msgs = append(msgs, p.Error())
	}
	assert.Equal(t, []string{
		`instances[1]: no positive integer "id"; entry left out`,
		`instances[2]: no positive integer "id"; entry left out`,
		`instances[3]: no positive integer "id"; entry left out`,
		`instances[4]: id 1 listed twice; the first entry is used`,
		`instances[5]: key "attached": "true" is not a boolean; ignored`,
		`instances[5]: key "vm_pid": "x" is not an integer; ignored`,
		`instances[5]: key "gpu": ["a"] is not a string; ignored`,
		`instances[6]: key "pid": -1 is not a process id (1 to 2147483647); ignored`,
		`instances[7]: key "pid": 17.5 is not an integer; ignored`,
		`instances[7]: key "mac": 5 is not a string; ignored`,
	}, msgs)
}

func TestParseManifestNotAManifest(t *testing.T) {
	_, err := ParseManifest([]byte(`{"servers": []}`))
	require.EqualError(t, err, `manifest has no "instances" array`)
	_, err = ParseManifest([]byte(`{"instances": 5}`))
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrIncomplete))
}

// Every proper prefix of a manifest is what a reader racing the launcher's
// truncate-and-write can see; none may parse.
func TestParseManifestEveryPrefix(t *testing.T) {
	whole := readTestdata(t, "rundir/basic/instances.json")
	for n := range len(whole) - 1 { // the last byte is the trailing newline
		_, err := ParseManifest(whole[:n])
		require.ErrorIs(t, err, ErrIncomplete, "prefix of %d bytes", n)
	}
}

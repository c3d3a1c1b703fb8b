// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteStatsInPlaceTruncates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "2.stats")
	big := specExample()
	for i := range 200 {
		big.QPs = append(big.QPs, QP{Handle: uint32(100 + i), WQEsProcessed: 1, Opcodes: []Counter{{"SEND", 1}}})
	}
	if err := WriteStatsInPlace(path, big); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= statsBufSize {
		t.Fatalf("test file too small (%d) to span buffers", fi.Size())
	}
	small := specExample()
	small.QPs = nil
	if err := WriteStatsInPlace(path, small); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := format(t, small); string(got) != want {
		t.Errorf("file after rewrite:\n%s\nwant\n%s", got, want)
	}
}

// manifestJSON mirrors the spec's manifest for decoding.
type manifestJSON struct {
	Instances []struct {
		ID     int             `json:"id"`
		Role   *string         `json:"role"`
		PID    int             `json:"pid"`
		MAC    string          `json:"mac"`
		Socket string          `json:"socket"`
		VM     json.RawMessage `json:"vm"`
	} `json:"instances"`
}

func TestWriteManifestInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "instances.json")
	vm := &VM{
		Attached: true, VMName: "train-a", VMPID: 5230, LaunchedAt: 1767225600.25, GPU: "0000:c1:00.0",
		QMPSocket: "/run/rocm-ernic/qmp-2.sock", DeviceID: "ernic2", RootPort: "pcie-vfu.1",
		SSHUser: "ubuntu", SSHPort: 2223,
	}
	in := []Instance{
		{ID: 1, Role: "manager", PID: 4100, MAC: "02:aa:00:00:00:01", Socket: "/run/rocm-ernic/1.sock"},
		{ID: 2, Role: "worker", PID: 4117, MAC: "02:aa:00:00:00:02", Socket: "/run/rocm-ernic/2.sock", VM: vm},
		{ID: 7, PID: 4200, MAC: "02:AA:00:00:00:07", Socket: "/run/rocm-ernic/7.sock",
			VM: &VM{Attached: false, GPU: "", QMPSocket: "/run/rocm-ernic/qmp-7.sock"}},
	}
	// Pre-fill with something longer to check truncation.
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 10000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteManifestInPlace(path, in); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "{\n  \"instances\": [\n    {\n      \"id\": 1,\n      \"role\": \"manager\",") {
		t.Errorf("not 2-space indented in launcher key order:\n%s", raw)
	}
	var m manifestJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest does not parse: %v\n%s", err, raw)
	}
	if len(m.Instances) != 3 {
		t.Fatalf("got %d instances", len(m.Instances))
	}
	for i, want := range in {
		got := m.Instances[i]
		if got.ID != want.ID || got.PID != want.PID || got.MAC != want.MAC || got.Socket != want.Socket {
			t.Errorf("instance %d: got %+v, want %+v", i, got, want)
		}
		if want.Role == "" && got.Role != nil {
			t.Errorf("instance %d: empty role written as %q", i, *got.Role)
		}
		if want.Role != "" && (got.Role == nil || *got.Role != want.Role) {
			t.Errorf("instance %d: role %v, want %q", i, got.Role, want.Role)
		}
	}
	if string(m.Instances[0].VM) != "null" {
		t.Errorf("nil VM written as %s", m.Instances[0].VM)
	}
	var v map[string]any
	if err := json.Unmarshal(m.Instances[1].VM, &v); err != nil {
		t.Fatal(err)
	}
	wantVM := map[string]any{
		"attached": true, "vm_name": "train-a", "vm_pid": 5230.0, "launched_at": 1767225600.25,
		"gpu": "0000:c1:00.0", "qmp_socket": "/run/rocm-ernic/qmp-2.sock", "device_id": "ernic2",
		"root_port": "pcie-vfu.1", "ssh_user": "ubuntu", "ssh_port": 2223.0,
	}
	if len(v) != len(wantVM) {
		t.Errorf("vm keys: got %v, want %v", v, wantVM)
	}
	for k, want := range wantVM {
		if v[k] != want {
			t.Errorf("vm.%s = %v (%T), want %v", k, v[k], v[k], want)
		}
	}
	v = nil
	if err := json.Unmarshal(m.Instances[2].VM, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"vm_name", "vm_pid", "launched_at"} {
		if _, ok := v[k]; ok {
			t.Errorf("unset %s written: %v", k, v)
		}
	}
	if v["attached"] != false || v["gpu"] != "" {
		t.Errorf("detached vm: %v", v)
	}

	if err := WriteManifestInPlace(path, nil); err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"instances":[]}` {
		t.Errorf("empty manifest = %q", raw)
	}
}

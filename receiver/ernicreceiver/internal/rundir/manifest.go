// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// ManifestFile is the manifest's file name inside the run directory.
const ManifestFile = "instances.json"

// Manifest is a parsed instances.json (rundir/README.md §2).
type Manifest struct {
	// Instances are the usable entries in file order, ids unique.
	Instances []Instance
	// Problems lists the entries and keys left out; the rest are still usable.
	Problems []error
}

// Instance is one entry of the manifest's `instances` array.
type Instance struct {
	// ID is key `id`, a positive integer; the stats file is <ID>.stats.
	ID int64
	// Role is key `role` (`manager`, `worker`), "unknown" when absent.
	Role string
	// PID is key `pid`, the rocm-ernic server process; 0 when absent.
	PID int
	// MAC is key `mac`, as written.
	MAC string
	// VM is key `vm`; nil when null or absent.
	VM *VM
}

// clone returns a copy of m that shares nothing that can be changed with m.
func (m *Manifest) clone() *Manifest {
	c := &Manifest{Instances: slices.Clone(m.Instances), Problems: slices.Clone(m.Problems)}
	for i := range c.Instances {
		if vm := c.Instances[i].VM; vm != nil {
			v := *vm
			c.Instances[i].VM = &v
		}
	}
	return c
}

// StatsFile returns the instance's stats file name, <id>.stats.
func (i *Instance) StatsFile() string { return strconv.FormatInt(i.ID, 10) + ".stats" }

// VM is the `vm` object of a manifest entry. Every key is optional.
type VM struct {
	// Attached is key `attached`.
	Attached bool
	// Name is key `vm_name` (vm-launch only).
	Name string
	// PID is key `vm_pid`, the VM launcher process (vm-launch only); 0 when absent.
	PID int
	// LaunchedAt is key `launched_at`, epoch seconds; HasLaunchedAt: present.
	LaunchedAt    float64
	HasLaunchedAt bool
	// GPU is key `gpu`: comma-separated PCI addresses passed through, or "".
	GPU string
}

// ParseManifest parses instances.json. Invalid JSON, which a reader racing
// the in-place rewrite can see, wraps ErrIncomplete.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty manifest", ErrIncomplete)
	}
	var doc struct {
		Instances *[]json.RawMessage `json:"instances"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		// What a reader racing the in-place rewrite sees.
		return nil, fmt.Errorf("%w: manifest is not a whole JSON document: %v", ErrIncomplete, err)
	}
	if doc.Instances == nil {
		return nil, errors.New("manifest has no \"instances\" array")
	}
	m := &Manifest{Instances: make([]Instance, 0, len(*doc.Instances))}
	seen := make(map[int64]struct{}, len(*doc.Instances))
	for n, raw := range *doc.Instances {
		inst, problems, err := decodeInstance(raw)
		for _, p := range problems {
			m.Problems = append(m.Problems, fmt.Errorf("instances[%d]: %w", n, p))
		}
		if err != nil {
			m.Problems = append(m.Problems, fmt.Errorf("instances[%d]: %w; entry left out", n, err))
			continue
		}
		if _, dup := seen[inst.ID]; dup {
			m.Problems = append(m.Problems, fmt.Errorf("instances[%d]: id %d listed twice; the first entry is used", n, inst.ID))
			continue
		}
		seen[inst.ID] = struct{}{}
		m.Instances = append(m.Instances, inst)
	}
	return m, nil
}

// decodeInstance decodes key by key, so that a key of the wrong type costs
// that key, not the entry; only an unusable `id` drops the entry.
func decodeInstance(raw json.RawMessage) (inst Instance, problems []error, err error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Instance{}, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	key := func(name string, dst any) bool {
		v, ok := obj[name]
		if !ok || string(v) == "null" {
			return false
		}
		if err := json.Unmarshal(v, dst); err != nil {
			problems = append(problems, fmt.Errorf("key %q: %s is not %s; ignored", name, v, typeName(dst)))
			return false
		}
		return true
	}
	var id int64
	if err := json.Unmarshal(obj["id"], &id); err != nil || id <= 0 {
		return Instance{}, nil, errors.New(`no positive integer "id"`)
	}
	inst = Instance{ID: id, Role: "unknown"}
	key("role", &inst.Role)
	inst.PID = pidKey("pid", key, &problems)
	key("mac", &inst.MAC)

	var vm map[string]json.RawMessage
	if !key("vm", &vm) {
		return inst, problems, nil
	}
	obj, inst.VM = vm, &VM{}
	key("attached", &inst.VM.Attached)
	key("vm_name", &inst.VM.Name)
	inst.VM.PID = pidKey("vm_pid", key, &problems)
	inst.VM.HasLaunchedAt = key("launched_at", &inst.VM.LaunchedAt)
	key("gpu", &inst.VM.GPU)
	return inst, problems, nil
}

// pidKey decodes key name as a process id, 1 to 2^31-1; another integer is
// reported as a problem rather than read silently as "no pid" (0).
func pidKey(name string, key func(string, any) bool, problems *[]error) int {
	var pid int64
	if !key(name, &pid) {
		return 0
	}
	if pid <= 0 || pid > math.MaxInt32 {
		*problems = append(*problems, fmt.Errorf("key %q: %d is not a process id (1 to %d); ignored", name, pid, math.MaxInt32))
		return 0
	}
	return int(pid)
}

func typeName(v any) string {
	switch v.(type) {
	case *string:
		return "a string"
	case *bool:
		return "a boolean"
	case *int64:
		return "an integer"
	case *float64:
		return "a number"
	default:
		return "a JSON object"
	}
}

package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ManifestFile is the manifest's file name inside the run directory.
const ManifestFile = "instances.json"

// Manifest is a parsed instances.json (run-dir-format.md §2).
type Manifest struct {
	// Instances are the usable entries in file order, ids unique.
	Instances []Instance
	// Problems lists entries that were left out (no usable id, duplicate id,
	// a key of the wrong type); the other entries are still usable.
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
	// LaunchedAt is key `launched_at`, Unix epoch seconds; HasLaunchedAt
	// tells whether it was present.
	LaunchedAt    float64
	HasLaunchedAt bool
	// GPU is key `gpu`: comma-separated PCI addresses passed through, or "".
	GPU string
}

type rawInstance struct {
	ID   *int64  `json:"id"`
	Role *string `json:"role"`
	PID  *int    `json:"pid"`
	MAC  string  `json:"mac"`
	VM   *rawVM  `json:"vm"`
}

type rawVM struct {
	Attached   bool     `json:"attached"`
	Name       string   `json:"vm_name"`
	PID        int      `json:"vm_pid"`
	LaunchedAt *float64 `json:"launched_at"`
	GPU        string   `json:"gpu"`
}

// ParseManifest parses instances.json. An empty, cut or otherwise invalid
// JSON document (a writer truncates and rewrites the file in place, so a
// reader can see any prefix of it) is an error wrapping ErrIncomplete; a
// valid document without an `instances` array is an error too. Entries that
// cannot be used are listed in Manifest.Problems and left out.
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
		// A syntax error or an unexpected end: what a reader racing the
		// in-place rewrite sees.
		return nil, fmt.Errorf("%w: manifest is not a whole JSON document: %v", ErrIncomplete, err)
	}
	if doc.Instances == nil {
		return nil, errors.New("manifest has no \"instances\" array")
	}
	m := &Manifest{Instances: make([]Instance, 0, len(*doc.Instances))}
	seen := make(map[int64]struct{}, len(*doc.Instances))
	for n, raw := range *doc.Instances {
		var ri rawInstance
		if err := json.Unmarshal(raw, &ri); err != nil {
			m.Problems = append(m.Problems, fmt.Errorf("instances[%d]: %w", n, err))
			continue
		}
		if ri.ID == nil || *ri.ID <= 0 {
			m.Problems = append(m.Problems, fmt.Errorf("instances[%d]: no positive integer \"id\"", n))
			continue
		}
		if _, dup := seen[*ri.ID]; dup {
			m.Problems = append(m.Problems, fmt.Errorf("instances[%d]: id %d listed twice; the first entry is used", n, *ri.ID))
			continue
		}
		seen[*ri.ID] = struct{}{}
		inst := Instance{ID: *ri.ID, Role: "unknown", MAC: ri.MAC}
		if ri.Role != nil {
			inst.Role = *ri.Role
		}
		if ri.PID != nil && *ri.PID > 0 {
			inst.PID = *ri.PID
		}
		if ri.VM != nil {
			inst.VM = &VM{Attached: ri.VM.Attached, Name: ri.VM.Name, PID: ri.VM.PID, GPU: ri.VM.GPU}
			if ri.VM.LaunchedAt != nil {
				inst.VM.LaunchedAt, inst.VM.HasLaunchedAt = *ri.VM.LaunchedAt, true
			}
		}
		m.Instances = append(m.Instances, inst)
	}
	return m, nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// statsBufSize is the stdio buffer size of the server's stats stream: a
// racing reader sees the file grow in chunks of this many bytes.
const statsBufSize = 4096

// WriteStatsInPlace writes s to path the server's way: truncated in place
// through a 4096-byte buffer (rundir/README.md §4).
func WriteStatsInPlace(path string, s *Stats) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, statsBufSize)
	err = FormatStats(bw, s)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// VM is the "vm" object of one manifest instance (rundir/README.md §2).
type VM struct {
	// Attached is "attached": true after attach/launch, false after detach.
	Attached bool
	// VMName is "vm_name"; written only when non-empty (vm-launch only).
	VMName string
	// VMPID is "vm_pid", the VM launcher's pid; written when non-zero.
	VMPID int
	// LaunchedAt is "launched_at", epoch seconds; written when non-zero.
	LaunchedAt float64
	// GPU is "gpu": comma-separated PCI addresses passed through, or "".
	GPU string
	// QMPSocket is "qmp_socket" (<run_dir>/qmp-<id>.sock).
	QMPSocket string
	// DeviceID is "device_id" (e.g. "ernic2").
	DeviceID string
	// RootPort is "root_port" (e.g. "pcie-vfu.1").
	RootPort string
	// SSHUser is "ssh_user".
	SSHUser string
	// SSHPort is "ssh_port" (TCP port).
	SSHPort int
}

// Instance is one element of the manifest's "instances" array (rundir/README.md §2).
type Instance struct {
	// ID is "id", the instance id; its stats file is <run_dir>/<ID>.stats.
	ID int
	// Role is "role"; omitted when empty, like a hand-written manifest.
	Role string
	// PID is "pid", the pid of the instance's server process.
	PID int
	// MAC is "mac" ("xx:xx:xx:xx:xx:xx").
	MAC string
	// Socket is "socket" (<run_dir>/<id>.sock).
	Socket string
	// VM is "vm"; nil is written as null.
	VM *VM
}

// jsonVM fixes the key order of the launcher (rundir/README.md §2 example).
type jsonVM struct {
	QMPSocket  string  `json:"qmp_socket"`
	DeviceID   string  `json:"device_id"`
	RootPort   string  `json:"root_port"`
	SSHPort    int     `json:"ssh_port"`
	SSHUser    string  `json:"ssh_user"`
	Attached   bool    `json:"attached"`
	VMPID      int     `json:"vm_pid,omitempty"`
	VMName     string  `json:"vm_name,omitempty"`
	LaunchedAt float64 `json:"launched_at,omitempty"`
	GPU        string  `json:"gpu"`
}

type jsonInstance struct {
	ID     int     `json:"id"`
	Role   string  `json:"role,omitempty"`
	PID    int     `json:"pid"`
	MAC    string  `json:"mac"`
	Socket string  `json:"socket"`
	VM     *jsonVM `json:"vm"`
}

type jsonManifest struct {
	Instances []jsonInstance `json:"instances"`
}

// MarshalManifest returns the launcher's bytes: 2-space indentation, no
// trailing newline.
func MarshalManifest(instances []Instance) ([]byte, error) {
	if len(instances) == 0 {
		return []byte(`{"instances":[]}`), nil
	}
	m := jsonManifest{Instances: make([]jsonInstance, 0, len(instances))}
	for _, in := range instances {
		ji := jsonInstance{ID: in.ID, Role: in.Role, PID: in.PID, MAC: in.MAC, Socket: in.Socket}
		if in.VM != nil {
			v := in.VM
			ji.VM = &jsonVM{
				QMPSocket: v.QMPSocket, DeviceID: v.DeviceID, RootPort: v.RootPort,
				SSHPort: v.SSHPort, SSHUser: v.SSHUser, Attached: v.Attached,
				VMPID: v.VMPID, VMName: v.VMName, LaunchedAt: v.LaunchedAt, GPU: v.GPU,
			}
		}
		m.Instances = append(m.Instances, ji)
	}
	return json.MarshalIndent(m, "", "  ")
}

// WriteManifestInPlace writes MarshalManifest's bytes to path the
// launcher's way: truncated in place in one write, no rename.
func WriteManifestInPlace(path string, instances []Instance) error {
	b, err := MarshalManifest(instances)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func cloneStats(st Stats) Stats {
	st.QPs = slices.Clone(st.QPs)
	for i := range st.QPs {
		st.QPs[i].Opcodes = slices.Clone(st.QPs[i].Opcodes)
	}
	st.LIF = slices.Clone(st.LIF)
	return st
}

// write renders in's current counters with the given connection state and
// rewrites its stats file in place. Called with s.mu held.
func (s *Sim) write(in *inst, conn string) error {
	st := s.render(in, conn)
	path := filepath.Join(s.o.RunDir, fmt.Sprintf("%d.stats", in.ID))
	if err := WriteStatsInPlace(path, &st); err != nil {
		s.logf("error writing %s: %v", path, err)
		return err
	}
	in.writes++
	s.last[in.ID] = st
	s.logf("wrote %s write_count=%d", path, st.WriteCount)
	if s.wrote != nil {
		s.wrote(in, &st)
	}
	return nil
}

// render returns the Stats of in's next write with connection state conn,
// or a chaos fault's bad state while one is set. Called with s.mu held.
func (s *Sim) render(in *inst, conn string) Stats {
	st := in.eng.stats(in.writes, s.o.LIF)
	st.Socket = in.Socket
	st.Backend = in.backend
	st.PCI = "0x1dd8:0x100a"
	st.MAC = in.MAC
	st.Connection = conn
	st.WriteCount = in.writes
	if s.o.LIF {
		st.LIF = append(st.LIF, in.extraLIF...)
	}
	if in.badConn != "" {
		st.Connection = in.badConn
	}
	return st
}

func (s *Sim) writeManifest() error {
	list := make([]Instance, 0, len(s.insts))
	for _, in := range s.insts {
		list = append(list, in.Instance)
	}
	err := WriteManifestInPlace(filepath.Join(s.o.RunDir, "instances.json"), list)
	if err != nil {
		s.logf("error writing manifest: %v", err)
	}
	return err
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"time"

	"github.com/prometheus/procfs"
)

// Usage is a process's CPU time and memory, as /proc shows them.
type Usage struct {
	// CPU is its user and system time since it started.
	CPU time.Duration
	// RSS is its resident memory now, PeakRSS the most it had (VmHWM), in bytes.
	RSS, PeakRSS uint64
}

// ProcessUsage reads pid's Usage.
func ProcessUsage(pid int) (Usage, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return Usage{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return Usage{}, err
	}
	status, err := p.NewStatus()
	if err != nil {
		return Usage{}, err
	}
	return Usage{
		CPU: time.Duration(st.CPUTime() * float64(time.Second)),
		RSS: uint64(st.ResidentMemory()), PeakRSS: status.VmHWM,
	}, nil
}

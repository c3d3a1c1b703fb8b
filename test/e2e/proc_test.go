// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What /proc says of a process: its start time as the receiver computes
// it, and its listening sockets.

// ownStart is this process's start time as the receiver computes it.
func ownStart() time.Time { return processStart(os.Getpid()) }

// processStart is the start time of process pid as the receiver computes
// it: field 22 of /proc/<pid>/stat (clock ticks since boot, USER_HZ 100)
// plus btime.
func processStart(pid int) time.Time {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		panic(err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	// fields[0] is field 3 (state): field 22 is fields[19].
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		panic(err)
	}
	f, err := os.Open("/proc/stat")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			btime, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				panic(err)
			}
			return time.Unix(btime, 0).Add(time.Duration(ticks) * (time.Second / 100))
		}
	}
	panic(errors.New("/proc/stat has no btime line"))
}

// waitPastOwnStart waits until the clock is clearly past this process's start
// time as computed from /proc: the receiver ignores a stats file older than
// its server process (a leftover of the previous one), and the fixtures'
// server process is this one.
func waitPastOwnStart(t *testing.T) {
	t.Helper()
	if d := time.Until(ownStart().Add(2 * time.Second)); d > 0 {
		t.Logf("waiting %v so that the fixture files are younger than the test process", d.Round(time.Millisecond))
		time.Sleep(d)
	}
}

// tcpListeners returns the sorted local addresses of the TCP sockets in
// LISTEN state that process pid holds, from /proc.
func tcpListeners(pid int) ([]string, error) {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			addr, err := decodeProcAddr(f[1])
			if err != nil {
				return nil, err
			}
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out, nil
}

// decodeProcAddr decodes a /proc/net/tcp{,6} local address "HEXIP:HEXPORT".
func decodeProcAddr(s string) (string, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("bad address %q", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return "", err
	}
	raw := make([]byte, len(hexIP)/2)
	for i := range raw {
		b, err := strconv.ParseUint(hexIP[2*i:2*i+2], 16, 8)
		if err != nil {
			return "", err
		}
		raw[i] = byte(b)
	}
	// The kernel prints the address as 32-bit words in host (little-endian)
	// byte order.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.JoinHostPort(net.IP(raw).String(), strconv.FormatUint(port, 10)), nil
}

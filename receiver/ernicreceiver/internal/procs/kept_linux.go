// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package procs

import (
	"io/fs"
	"syscall"
)

// procSuperMagic is the f_type statfs(2) gives a proc filesystem.
const procSuperMagic = 0x9fa0

// statFiles keeps <root>/<pid>/stat open under a proc filesystem, read with
// one pread(2) (docs/performance.md, Receiver benchmarks). A kept file
// follows its process: once it is reaped, a read gives ESRCH even if the pid
// was reused.
type statFiles struct {
	on  bool // root is a proc filesystem
	fds map[int]keptFile
}

type keptFile struct {
	fd   int
	used bool // read since the last closeUnused
}

func newStatFiles(root string) statFiles {
	var st syscall.Statfs_t
	return statFiles{on: syscall.Statfs(root, &st) == nil && st.Type == procSuperMagic}
}

// read preads <root>/<pid>/stat into buf; handled is false when none is kept.
func (s *statFiles) read(root string, pid int, buf []byte) (n int, handled bool, err error) {
	if !s.on {
		return 0, false, nil
	}
	if k, ok := s.fds[pid]; ok {
		n, err = syscall.Pread(k.fd, buf, 0)
		if err != syscall.ESRCH {
			k.used = true
			s.fds[pid] = k
			if err != nil {
				return 0, true, wrapPath("read", statPath(root, pid), err)
			}
			return n, true, nil
		}
		// The kept file's process is gone; the pid may be another's.
		syscall.Close(k.fd)
		delete(s.fds, pid)
	}
	path := statPath(root, pid)
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, true, wrapPath("open", path, err)
	}
	n, err = syscall.Pread(fd, buf, 0)
	if err != nil {
		syscall.Close(fd)
		return 0, true, wrapPath("read", path, err)
	}
	if len(s.fds) >= maxKept {
		syscall.Close(fd)
		return n, true, nil
	}
	if s.fds == nil {
		s.fds = map[int]keptFile{}
	}
	s.fds[pid] = keptFile{fd: fd, used: true}
	return n, true, nil
}

// maxKept bounds the files kept open (two an instance: its pid and its VM's).
const maxKept = 1024

// closeUnused closes the files not read since the last call.
func (s *statFiles) closeUnused() {
	for pid, k := range s.fds {
		if !k.used {
			syscall.Close(k.fd)
			delete(s.fds, pid)
			continue
		}
		k.used = false
		s.fds[pid] = k
	}
}

func (s *statFiles) closeAll() {
	for pid, k := range s.fds {
		syscall.Close(k.fd)
		delete(s.fds, pid)
	}
}

func wrapPath(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

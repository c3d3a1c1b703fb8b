// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Manifest and run-directory faults (run with c.global held exclusively).

// manifestSnapshot returns the manifest entries, taking s.mu; false when
// the simulation has stopped.
func (c *Chaos) manifestSnapshot() ([]Instance, bool) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, false
	}
	list := make([]Instance, 0, len(s.insts))
	for _, in := range s.insts {
		list = append(list, in.Instance)
	}
	return list, true
}

func (c *Chaos) manifestPath() string { return filepath.Join(c.s.o.RunDir, "instances.json") }

// chunkedWrite truncates path and writes b in chunks of 16..256 bytes with
// pauses of up to 3 ms: a slow writer.
func (c *Chaos) chunkedWrite(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	for len(b) > 0 && err == nil {
		n := min(len(b), 16+c.intn(241))
		_, err = f.Write(b[:n])
		b = b[n:]
		time.Sleep(time.Duration(c.intn(3000)) * time.Microsecond)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *Chaos) manifestRace(ctx context.Context) bool {
	s := c.s
	list, ok := c.manifestSnapshot()
	if !ok {
		return true
	}
	indented, err := MarshalManifest(list)
	if err != nil {
		return true
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, indented)
	path := c.manifestPath()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, b := range [][]byte{indented, compact.Bytes()} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.chunkedWrite(path, b)
		}()
	}
	wg.Wait()
	final, _ := os.ReadFile(path)
	s.mu.Lock()
	c.fault(ChaosManifestRace, nil, "two writers truncated and rewrote instances.json at once (%d and %d bytes); it is now %d bytes, valid JSON: %v (errors %v)",
		len(indented), compact.Len(), len(final), json.Valid(final), errors.Join(errs...))
	s.mu.Unlock()
	sleepCtx(ctx, c.hold())
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		c.faultEnd(ChaosManifestRace, nil)
		_ = s.writeManifest()
	}
	return true
}

func (c *Chaos) manifestTorn(ctx context.Context) bool {
	s := c.s
	list, ok := c.manifestSnapshot()
	if !ok {
		return true
	}
	b, err := MarshalManifest(list)
	if err != nil || len(b) < 2 {
		return true
	}
	cut := c.intn(len(b) - 1)
	pause := c.pause()
	f, err := os.OpenFile(c.manifestPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.Write(b[:cut])
	}
	s.mu.Lock()
	c.fault(ChaosManifestTorn, nil, "instances.json: %d of %d bytes written, then a pause of %v", cut, len(b), pause.Round(time.Millisecond))
	s.mu.Unlock()
	if err == nil {
		time.Sleep(pause)
		_, err = f.Write(b[cut:])
	}
	if f != nil {
		_ = f.Close()
	}
	if err != nil {
		s.mu.Lock()
		s.logf("error writing manifest: %v", err)
		s.mu.Unlock()
	}
	return true
}

func (c *Chaos) runDirRecreate(ctx context.Context) bool {
	s := c.s
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return true
	}
	err := os.RemoveAll(s.o.RunDir)
	gone := c.hold() / 2
	c.fault(ChaosRunDirRecreate, nil, "run directory removed for %v (%v)", gone.Round(time.Millisecond), err)
	s.mu.Unlock()
	sleepCtx(ctx, gone)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return true
	}
	if err := os.MkdirAll(s.o.RunDir, 0o755); err != nil {
		s.logf("error creating %s: %v", s.o.RunDir, err)
		return true
	}
	c.faultEnd(ChaosRunDirRecreate, nil)
	_ = s.writeManifest()
	for _, in := range s.insts {
		if !in.held() {
			_ = s.write(in, in.conn)
		}
	}
	return true
}

// addHuge adds the huge instance: a worker with HugeQPs QPs.
func (c *Chaos) addHuge() bool {
	c.addInstance(ChaosHugeInstance, c.o.HugeQPs, "instance %d added with %d QPs (they appear over the first four writes)")
	return true
}

// addWorker is manifest-grow: a worker with the simulator's QP count.
func (c *Chaos) addWorker() bool {
	c.addInstance(ChaosManifestGrow, c.s.o.QPs, "instance %d added with %d QPs: the manifest grows")
	return true
}

// addInstance adds a worker with qps QPs and the next id, and logs a fault
// of kind whose detail is format with the id and qps.
func (c *Chaos) addInstance(kind string, qps int, format string) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	id := 1
	for _, in := range s.insts {
		id = max(id, in.ID+1)
	}
	in := s.newWorker(id)
	in.VM = s.newVM(id, float64(time.Now().UnixMicro())/1e6)
	s.spawn(in)
	in.eng = newEngine(s.o.Seed, id, 0, qps, s.secs)
	s.insts = append(s.insts, in)
	c.lastRestart[id] = time.Now()
	c.fault(kind, in, format, id, qps)
	_ = s.write(in, in.conn)
	_ = s.writeManifest()
}

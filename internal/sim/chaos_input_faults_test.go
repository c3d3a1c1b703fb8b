// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChaosInputFaultsFaults runs only the input faults (invalid-utf8,
// future-mtime, manifest-grow) with MaxInstances 3, and checks each on the
// run directory while it lasts: the bad counter name is in the file, the
// mtime is hours ahead, the manifest grows, and no instance fault is aimed
// at an instance beyond MaxInstances.
func TestChaosInputFaultsFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a few seconds")
	}
	dir := filepath.Join(t.TempDir(), "run")
	s, err := New(Options{RunDir: dir, Instances: 3, QPs: 2, Interval: 50 * time.Millisecond, LIF: true, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var events syncBuffer
	c := startChaos(t, s, ChaosOptions{
		Events: &events, Every: 30 * time.Millisecond, TornEvery: -1,
		HoldMin: 300 * time.Millisecond, HoldMax: 400 * time.Millisecond,
		Kinds: []string{ChaosInvalidUTF8, ChaosFutureMtime, ChaosManifestGrow}, MaxInstances: 3, Seed: 2,
	})
	var sawName, sawFuture bool
	deadline := time.Now().Add(20 * time.Second)
	for !(sawName && sawFuture) || len(s.Instances()) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("within 20s: bad name seen %v, future mtime seen %v, instances %d", sawName, sawFuture, len(s.Instances()))
		}
		for id := 2; id <= 3; id++ {
			p := filepath.Join(dir, strconv.Itoa(id)+".stats")
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "  "+ChaosBadLIFName+" : ") && strings.Contains(string(b), ChaosBadConnection+"\n") {
				sawName = true
			}
			if fi, err := os.Stat(p); err == nil && fi.ModTime().After(time.Now().Add(FutureMtime-time.Minute)) {
				sawFuture = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, r := range chaosLog(t, []byte(events.String())) {
		if r.Event != "fault" {
			continue
		}
		switch r.Kind {
		case ChaosInvalidUTF8, ChaosFutureMtime:
			if r.ID > 3 {
				t.Errorf("%s aimed at instance %d, beyond MaxInstances 3", r.Kind, r.ID)
			}
			if r.Kind == ChaosInvalidUTF8 && r.Value < uint64(time.Now().Add(-time.Minute).Unix()) {
				t.Errorf("invalid-utf8 value %d is not the fault's Unix time", r.Value)
			}
		}
	}
	// After the faults: the files are clean again (next write), mtimes now.
	time.Sleep(200 * time.Millisecond)
	for id := 2; id <= 3; id++ {
		p := filepath.Join(dir, strconv.Itoa(id)+".stats")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		if strings.Contains(string(b), ChaosBadLIFName) || strings.Contains(string(b), ChaosBadConnection) || fi.ModTime().After(time.Now().Add(time.Minute)) {
			t.Errorf("instance %d: bad name or future mtime left after Stop (mtime %v)", id, fi.ModTime())
		}
	}
}

// TestChaosPIDReuseDecoyComm checks the command name of pid-reuse's
// unrelated process, read from /proc while the fault lasts: the server's
// or ChaosDecoyComm (every other fault), as the detail says, until it has
// seen both. Faults on two instances overlap, and the one that started
// first (the server's name) can be logged second: the order is not
// checked (it once failed CI that way).
func TestChaosPIDReuseDecoyComm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a few seconds")
	}
	s, err := New(Options{RunDir: filepath.Join(t.TempDir(), "run"), Instances: 3, QPs: 1, Interval: 50 * time.Millisecond, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var events syncBuffer
	startChaos(t, s, ChaosOptions{
		Events: &events, Every: 30 * time.Millisecond, TornEvery: -1, RestartGap: 50 * time.Millisecond,
		HoldMin: 1500 * time.Millisecond, HoldMax: 1600 * time.Millisecond, Kinds: []string{ChaosPIDReuse}, Seed: 2,
	})
	seen, renamed, plain := 0, 0, 0
	for deadline := time.Now().Add(20 * time.Second); renamed == 0 || plain == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("within 20s, %d pid-reuse faults checked: %d with the decoy's command name, %d with the server's", seen, renamed, plain)
		}
		var faults []ChaosRecord
		for _, r := range chaosLog(t, []byte(events.String())) {
			if r.Event == "fault" && r.Kind == ChaosPIDReuse {
				faults = append(faults, r)
			}
		}
		if len(faults) > seen {
			r := faults[seen]
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", r.PID))
			if err != nil {
				t.Fatalf("fault %d: %v (%s)", seen, err, r.Detail)
			}
			comm := strings.TrimSpace(string(b))
			decoy := strings.Contains(r.Detail, "command name: "+ChaosDecoyComm)
			if (comm == ChaosDecoyComm) != decoy {
				t.Errorf("fault %d: comm %q, detail %q", seen, comm, r.Detail)
			}
			if decoy {
				renamed++
			} else {
				plain++
			}
			seen++
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package harness is the shared harness of the system tests (test/e2e,
// test/soak, test/deploy, test/dashboards, test/package, test/switch,
// test/fleet): the repository root, the collector binary, a clean
// environment, child processes and their CPU and memory, collectors with
// host names of their own, Prometheus servers and their HTTP API, Thanos
// (receive, query, rule), a watch of a rule engine's alerts, samples
// compared between backends, a remote-write proxy for faults, the
// run-directory simulator, and copy-on-write roots in a mount namespace.
//
// Every helper fails the test (t.Fatal), never skips it, when what it needs
// is missing: the system tests are run on purpose (`make test`) and a
// missing program is a broken set-up, not a reason to pass. The one
// exception is root (RequireRoot): a test that needs it is skipped, with the
// reason, when run as an ordinary user; CI runs as root.
package harness

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modulePath is the module the repository root's go.mod declares.
const modulePath = "github.com/rocm-ernic/otelcol-ernic"

// FindRepoRoot returns the repository root: the nearest directory at or
// above the working directory whose go.mod declares this module.
func FindRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(mod, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of " + modulePath + ") not found")
		}
		dir = parent
	}
}

// RepoRoot is FindRepoRoot for a test: it fails the test without a root.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// builtBinary is a collector binary that a test run builds at most once.
type builtBinary struct {
	env, target, name string // $env, else `make target` builds build/name/name
	once              sync.Once
	path              string
	err               error
}

var (
	collectorBin = &builtBinary{env: "OTELCOL_BIN", target: "otelcol", name: "otelcol-ernic"}
	testBuildBin = &builtBinary{env: "OTELCOL_TEST_BIN", target: "otelcol-test", name: "otelcol-ernic-test"}
)

// CollectorBinary returns the otelcol-ernic binary: $OTELCOL_BIN when set
// (`make e2e-test` and `make soak` build it first), else the result of
// `make otelcol` in the repository root, run once per test binary. It fails
// the test when the binary is missing or not executable.
func CollectorBinary(t testing.TB) string {
	t.Helper()
	return collectorBin.get(t)
}

// CollectorVersion is what `otelcol-ernic --version` prints after
// "otelcol-ernic version ": the version the build carries (ocb's
// dist.version), which the selftelemetry receiver publishes.
func CollectorVersion(t testing.TB) string {
	t.Helper()
	bin := CollectorBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "otelcol-ernic version ")
	if !ok || v == "" {
		t.Fatalf("%s --version: %q, want \"otelcol-ernic version <version>\"", bin, out)
	}
	return v
}

// TestBuildBinary returns the test build of the distribution, with the
// components that only tests use (the OTLP receiver, otlp_http, contrib's
// prometheus exporter; the Makefile's otelcol-test): $OTELCOL_TEST_BIN when
// set (`make e2e-test` builds it first), else the result of
// `make otelcol-test`, run once per test binary.
func TestBuildBinary(t testing.TB) string {
	t.Helper()
	return testBuildBin.get(t)
}

func (b *builtBinary) get(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	b.once.Do(func() {
		if p := os.Getenv(b.env); p != "" {
			b.path = p
		} else {
			mk, err := exec.LookPath("make")
			if err != nil {
				b.err = fmt.Errorf("make is needed to build the collector (or set %s): %w", b.env, err)
				return
			}
			cmd := exec.Command(mk, b.target)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.err = fmt.Errorf("make %s: %w\n%s", b.target, err, out)
				return
			}
			b.path = filepath.Join(root, "build", b.name, b.name)
		}
		if fi, err := os.Stat(b.path); err != nil {
			b.err = fmt.Errorf("collector binary: %w", err)
		} else if fi.Mode()&0o111 == 0 {
			b.err = fmt.Errorf("collector binary %s is not executable", b.path)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// RequireRoot skips the test unless it runs as root, saying what it needs
// root for (what, e.g. "mount a tmpfs"): namespaces and mounts fail with
// EPERM for an ordinary user, which is not a fault of what is tested.
func RequireRoot(t testing.TB, what string) {
	t.Helper()
	if uid := os.Geteuid(); uid != 0 {
		t.Skipf("needs root to %s; runs as uid %d (CI runs make test as root)", what, uid)
	}
}

// Tool returns the path of the program name on PATH, failing the test
// without it; hint says how to install it.
func Tool(t testing.TB, name, hint string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required: %v (%s)", name, err, hint)
	}
	return p
}

// handedOut are the ports FreePort returned in this process: a test that
// takes many (a fleet's hosts) before its programs bind them must not get
// one twice.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call,
// and never one it returned before in this process.
func FreePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	// Below the kernel's ephemeral range (32768-60999 by default): a port
	// from :0 is one the kernel also hands out as the source port of
	// outgoing connections, and between this check and the program's bind
	// another process's connection took one now and then.
	for range 100 {
		port := 20000 + rand.IntN(32768-20000)
		if handedOut.ports[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			handedOut.ports[port] = true
			return port
		}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("no free port that was not handed out before")
	return 0
}

// CleanEnv is the test's environment without the ERNIC_* variables the
// configurations in config/ read (ERNIC_RUN_DIR, ERNIC_EXPORTER_PORT,
// ERNIC_REMOTE_WRITE_URL, ERNIC_STATE_DIR, ...), so that only what a test
// sets reaches the collector; a variable that starts with one of drop
// (e.g. "GODEBUG=") is left out too.
func CleanEnv(drop ...string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		if strings.HasPrefix(kv, "ERNIC_") {
			return true
		}
		for _, p := range drop {
			if strings.HasPrefix(kv, p) {
				return true
			}
		}
		return false
	})
}

// WriteFile writes text to the file name in a new temporary directory of
// the test and returns its path (configuration overrides and the like).
func WriteFile(t testing.TB, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Tail returns the last n bytes of s, marked with "..." when cut.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// LockedBuffer collects a child process's output from one or two pipes;
// it is safe for concurrent use.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the buffer.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

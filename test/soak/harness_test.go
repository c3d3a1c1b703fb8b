//go:build soak

package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// The helpers of test/e2e, which is another package: the repository root,
// the collector binary, free ports, a collector process, a Prometheus server
// with the remote-write receiver, and its HTTP API.

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.Contains(mod, []byte("module github.com/rocm-ernic/otelcol-ernic\n")) {
		t.Fatalf("repository root not found at %s (go.mod: %v)", root, err)
	}
	return root
}

// collectorBinary returns $OTELCOL_BIN, or builds the collector with `make
// otelcol`.
func collectorBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("OTELCOL_BIN"); p != "" {
		return p
	}
	root := repoRoot(t)
	cmd := exec.Command("make", "otelcol")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make otelcol: %v\n%s", err, out)
	}
	return filepath.Join(root, "build", "otelcol-ernic", "otelcol-ernic")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// cleanEnv is the environment without ERNIC_* and GODEBUG.
func cleanEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "ERNIC_") || strings.HasPrefix(kv, "GODEBUG=")
	})
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// process is a child process with its output and exit.
type process struct {
	cmd     *exec.Cmd
	log     *lockedBuffer // stdout, and stderr unless split
	stderr  *lockedBuffer // stderr when split
	exited  chan struct{}
	waitErr error
}

// startProcess starts name; splitStderr keeps stderr apart from stdout.
func startProcess(t *testing.T, name string, args, env []string, splitStderr bool) *process {
	t.Helper()
	p := &process{log: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = repoRoot(t)
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout = p.log
	p.cmd.Stderr = p.log
	if splitStderr {
		p.cmd.Stderr = p.stderr
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits up to d; it kills the process after that.
// It returns whether the process had to be killed.
func (p *process) stop(d time.Duration) (killed bool) {
	if !p.running() {
		return false
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return false
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return true
	}
}

// prometheusBinary is $PROMETHEUS_BIN or prometheus on PATH (Debian's 2.42).
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS_BIN"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("the soak test needs a Prometheus server: apt-get install -y --no-install-recommends prometheus, or set PROMETHEUS_BIN: %v", err)
	}
	return p
}

type promServer struct {
	port int
	proc *process
}

// startPrometheus starts Prometheus on a loopback port with the
// remote-write receiver on and no scrape target.
func startPrometheus(t *testing.T, dir string) *promServer {
	t.Helper()
	p := &promServer{port: freePort(t)}
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte("global:\n  scrape_interval: 15s\nscrape_configs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.proc = startProcess(t, prometheusBinary(t), []string{
		"--config.file=" + conf,
		"--storage.tsdb.path=" + filepath.Join(dir, "tsdb"),
		"--web.listen-address=" + fmt.Sprintf("127.0.0.1:%d", p.port),
		"--web.enable-remote-write-receiver",
		"--storage.tsdb.retention.time=2d",
	}, nil, false)
	t.Cleanup(func() {
		if p.proc.stop(30 * time.Second) {
			t.Errorf("prometheus did not stop within 30s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("prometheus log (tail):\n%s", tail(p.proc.log.String(), 4000))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if !p.proc.running() {
			t.Fatalf("prometheus exited before it was ready:\n%s", p.proc.log.String())
		}
		resp, err := http.Get(p.url("/-/ready"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within 30s (last: %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *promServer) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
}

type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

func promTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// query evaluates q at time at: an instant vector or, for a range
// selector, a matrix of raw samples.
func (p *promServer) query(ctx context.Context, q string, at time.Time) (model.Vector, model.Matrix, error) {
	params := url.Values{"query": {q}, "time": {promTime(at)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url("/api/v1/query"), strings.NewReader(params.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", q, resp.Status, err)
	}
	if r.Status != "success" {
		return nil, nil, fmt.Errorf("%s: %s: %s: %s", q, resp.Status, r.ErrorType, r.Error)
	}
	switch r.Data.ResultType {
	case "vector":
		var v model.Vector
		return v, nil, json.Unmarshal(r.Data.Result, &v)
	case "matrix":
		var m model.Matrix
		return nil, m, json.Unmarshal(r.Data.Result, &m)
	}
	return nil, nil, fmt.Errorf("%s: result type %q", q, r.Data.ResultType)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

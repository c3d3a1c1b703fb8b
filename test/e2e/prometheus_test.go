//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// prometheusBinary returns the Prometheus server binary: $PROMETHEUS_BIN, else
// prometheus on PATH (Debian's package "prometheus", 2.42; .ci/run installs
// it). The tests fail, never skip, without it.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS_BIN"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("the remote-write tests need a Prometheus server: install Debian's package "+
			"(apt-get install -y --no-install-recommends prometheus; .ci/run does) or set PROMETHEUS_BIN: %v", err)
	}
	return p
}

// promServer is a Prometheus server on a loopback port with the remote-write
// receiver on, and its TSDB in a test directory. It can be stopped and started
// again on the same port and TSDB.
type promServer struct {
	t    *testing.T
	bin  string
	port int
	dir  string // TSDB
	conf string

	cmd    *exec.Cmd
	log    *lockedBuffer
	exited chan struct{}
}

// startPrometheus starts a Prometheus server and stops it when the test ends.
func startPrometheus(t *testing.T) *promServer {
	t.Helper()
	p := &promServer{t: t, bin: prometheusBinary(t), port: freePort(t), dir: t.TempDir(), log: &lockedBuffer{}}
	// No scrape targets: the only samples are the ones written to it.
	p.conf = filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(p.conf, []byte("global:\n  scrape_interval: 15s\nscrape_configs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.start()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", p.log.String())
		}
	})
	return p
}

// start runs the server and waits for /-/ready.
func (p *promServer) start() {
	t := p.t
	t.Helper()
	p.cmd = exec.Command(p.bin,
		"--config.file="+p.conf,
		"--storage.tsdb.path="+p.dir,
		"--web.listen-address="+fmt.Sprintf("127.0.0.1:%d", p.port),
		"--web.enable-remote-write-receiver",
		"--storage.tsdb.retention.time=1d",
	)
	p.cmd.Stdout = p.log
	p.cmd.Stderr = p.log
	p.exited = make(chan struct{})
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.bin, err)
	}
	exited := p.exited
	cmd := p.cmd
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("prometheus exited before it was ready:\n%s", p.log.String())
		default:
		}
		resp, err := http.Get(p.url("/-/ready"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within 30s (last: %v):\n%s", err, p.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop stops the server with SIGTERM (it flushes its head) and waits for it.
func (p *promServer) stop() {
	if p.cmd == nil {
		return
	}
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			p.t.Errorf("prometheus did not stop within 30s of SIGTERM; killing it")
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	p.cmd = nil
}

func (p *promServer) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
}

// writeURL is the remote-write endpoint.
func (p *promServer) writeURL() string { return p.url("/api/v1/write") }

// apiResponse is the envelope of the HTTP API's answers.
type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

func (p *promServer) api(ctx context.Context, path string, params url.Values) (*apiResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url(path), strings.NewReader(params.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s %s: %s: %w\n%s", path, params.Get("query"), resp.Status, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s %s: %s: %s: %s", path, params.Get("query"), resp.Status, r.ErrorType, r.Error)
	}
	return &r, nil
}

func promTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// query evaluates an instant query at time at. An instant vector comes back
// as a Vector (and Matrix nil); a range-vector selector (raw samples) as a
// Matrix.
func (p *promServer) query(ctx context.Context, q string, at time.Time) (model.Vector, model.Matrix, error) {
	r, err := p.api(ctx, "/api/v1/query", url.Values{"query": {q}, "time": {promTime(at)}})
	if err != nil {
		return nil, nil, err
	}
	switch r.Data.ResultType {
	case "vector":
		var v model.Vector
		err := json.Unmarshal(r.Data.Result, &v)
		return v, nil, err
	case "matrix":
		var m model.Matrix
		err := json.Unmarshal(r.Data.Result, &m)
		return nil, m, err
	case "scalar":
		var s model.Scalar
		if err := json.Unmarshal(r.Data.Result, &s); err != nil {
			return nil, nil, err
		}
		return model.Vector{{Metric: model.Metric{}, Value: s.Value, Timestamp: s.Timestamp}}, nil, nil
	}
	return nil, nil, fmt.Errorf("query %s: result type %q", q, r.Data.ResultType)
}

// vector evaluates an instant query that must return an instant vector.
func (p *promServer) vector(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	v, m, err := p.query(ctx, q, at)
	if err == nil && m != nil {
		err = fmt.Errorf("query %s: a range vector, want an instant vector", q)
	}
	return v, err
}

// rawSamples returns the samples Prometheus stored for selector in (at-window,
// at], by series (a range-vector selector: no staleness markers, no
// extrapolation).
func (p *promServer) rawSamples(ctx context.Context, selector string, window time.Duration, at time.Time) (model.Matrix, error) {
	q := fmt.Sprintf("%s[%dms]", selector, window.Milliseconds())
	_, m, err := p.query(ctx, q, at)
	if err == nil && m == nil {
		err = fmt.Errorf("query %s: not a range vector", q)
	}
	return m, err
}

// queryRange evaluates q at every step from start to end.
func (p *promServer) queryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	r, err := p.api(ctx, "/api/v1/query_range", url.Values{
		"query": {q}, "start": {promTime(start)}, "end": {promTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', 3, 64)},
	})
	if err != nil {
		return nil, err
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("query_range %s: result type %q", q, r.Data.ResultType)
	}
	var m model.Matrix
	err = json.Unmarshal(r.Data.Result, &m)
	return m, err
}

// errNoSeries reports a query that returned no series.
var errNoSeries = errors.New("no series")

// scalarAt evaluates q, which must return exactly one series, at time at.
func (p *promServer) scalarAt(ctx context.Context, q string, at time.Time) (float64, error) {
	v, err := p.vector(ctx, q, at)
	if err != nil {
		return 0, err
	}
	switch len(v) {
	case 0:
		return 0, fmt.Errorf("%s: %w", q, errNoSeries)
	case 1:
		return float64(v[0].Value), nil
	}
	return 0, fmt.Errorf("%s: %d series, want 1: %v", q, len(v), v)
}

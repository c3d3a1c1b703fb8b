// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// PrometheusBinary returns the Prometheus server binary: $PROMETHEUS_BIN,
// else prometheus on PATH (Debian's package "prometheus", 2.42; .ci/run
// installs it). It fails the test without one.
func PrometheusBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS_BIN"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("this test needs a Prometheus server: install Debian's package "+
			"(apt-get install -y --no-install-recommends prometheus; .ci/run does) or set PROMETHEUS_BIN: %v", err)
	}
	return p
}

// Prometheus3Binary returns a Prometheus 3 server (its OTLP receiver is not
// in Debian's 2.42): $PROMETHEUS3_BIN, else bin/prometheus3, which `make
// prometheus3` builds from the Go module proxy (`make e2e-test` and so
// `make test` do, once). It fails the test without one.
func Prometheus3Binary(t testing.TB) string {
	t.Helper()
	return madeBinary(t, "PROMETHEUS3_BIN", "prometheus3", "Prometheus 3")
}

// madeBinary returns $env, else bin/name, which `make name` builds; it
// fails the test, saying so, without either.
func madeBinary(t testing.TB, env, name, what string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := filepath.Join(RepoRoot(t), "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("this test needs %s: run `make %s` (it builds bin/%s) or set %s: %v", what, name, name, env, err)
	}
	return p
}

// RemoteWriteConfig is the configuration of a Prometheus that only stores
// what is written to it: no scrape target.
const RemoteWriteConfig = "global:\n  scrape_interval: 15s\nscrape_configs: []\n"

// Prometheus is a Prometheus server of a test on a loopback port, with its
// configuration and TSDB in a directory of the test. It can be stopped and
// started again on the same port and TSDB.
type Prometheus struct {
	// Bin is the server binary.
	Bin string
	// Port is its loopback HTTP port.
	Port int
	// Dir holds prometheus.yml and the TSDB (tsdb/).
	Dir string
	// Log is its output, over all its starts.
	Log *LockedBuffer
	// Access, when set (before Start), is how the tests reach a server
	// started with --web.config.file (TLS, client certificates, basic
	// auth); its URLs are then https.
	Access *Access

	t     testing.TB
	flags []string
	ready time.Duration
	proc  *Process
}

// StartPrometheus starts bin in dir (a new temporary directory when "") with
// the configuration text conf, on a free loopback port, with flags after
// its configuration, storage and listen flags. It waits up to ready for
// /-/ready and stops the server (SIGTERM; a kill after 30 s is an error)
// when the test ends, printing its log when the test failed.
func StartPrometheus(t testing.TB, bin, dir string, ready time.Duration, conf string, flags ...string) *Prometheus {
	t.Helper()
	p := NewPrometheus(t, bin, dir, ready, conf, flags...)
	p.Start()
	return p
}

// NewPrometheus is StartPrometheus without the start: set Access, then Start.
func NewPrometheus(t testing.TB, bin, dir string, ready time.Duration, conf string, flags ...string) *Prometheus {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	p := &Prometheus{Bin: bin, Port: FreePort(t), Dir: dir, Log: &LockedBuffer{}, t: t, flags: flags, ready: ready}
	if err := os.WriteFile(p.confPath(), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("prometheus %s log:\n%s", bin, p.Log.String())
		}
	})
	return p
}

// StartRemoteWritePrometheus starts Debian's Prometheus (PrometheusBinary)
// with RemoteWriteConfig, the remote-write receiver on and the TSDB
// retention given (e.g. "1d"), in dir ("" for a temporary one), ready
// within 30 s.
func StartRemoteWritePrometheus(t testing.TB, dir, retention string) *Prometheus {
	t.Helper()
	return StartPrometheus(t, PrometheusBinary(t), dir, 30*time.Second, RemoteWriteConfig,
		"--web.enable-remote-write-receiver", "--storage.tsdb.retention.time="+retention)
}

func (p *Prometheus) confPath() string { return filepath.Join(p.Dir, "prometheus.yml") }

// Start runs the server (again) and waits for /-/ready.
func (p *Prometheus) Start() {
	t := p.t
	t.Helper()
	p.proc = Start(t, Launch{
		Name: "prometheus", Path: p.Bin, Log: p.Log,
		Args: append([]string{
			"--config.file=" + p.confPath(),
			"--storage.tsdb.path=" + filepath.Join(p.Dir, "tsdb"),
			"--web.listen-address=" + fmt.Sprintf("127.0.0.1:%d", p.Port),
		}, p.flags...),
	})
	deadline := time.Now().Add(p.ready)
	for {
		if !p.proc.Running() {
			t.Fatalf("prometheus %s exited before it was ready:\n%s", p.Bin, p.Log.String())
		}
		a, err := fetch(context.Background(), p.Access, http.MethodGet, p.URL("/-/ready"), nil)
		if err == nil {
			if a.code == http.StatusOK {
				return
			}
			err = errors.New(a.status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus %s not ready within %v (last: %v):\n%s", p.Bin, p.ready, err, p.Log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops the server with SIGTERM (it flushes its head) and waits for
// it; one still running after 30 s is killed and fails the test.
func (p *Prometheus) Stop() {
	if p.proc == nil {
		return
	}
	if p.proc.Stop(30 * time.Second) {
		p.t.Errorf("prometheus did not stop within 30s of SIGTERM; killed it")
	}
	p.proc = nil
}

// Running reports whether the server is running.
func (p *Prometheus) Running() bool { return p.proc != nil && p.proc.Running() }

// Signal sends sig to the running server (SIGHUP: reload the rules).
func (p *Prometheus) Signal(sig os.Signal) error {
	if p.proc == nil {
		return errors.New("prometheus is not running")
	}
	return p.proc.Signal(sig)
}

// Reconfigure writes conf as the server's configuration and has it reload
// it (SIGHUP).
func (p *Prometheus) Reconfigure(conf string) error {
	if err := os.WriteFile(p.confPath(), []byte(conf), 0o644); err != nil {
		return err
	}
	return p.Signal(syscall.SIGHUP)
}

// URL is the server's URL of path.
func (p *Prometheus) URL(path string) string {
	scheme := "http"
	if p.Access != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, p.Port, path)
}

// WriteURL is the remote-write endpoint.
func (p *Prometheus) WriteURL() string { return p.URL("/api/v1/write") }

// APIResponse is the envelope of the HTTP API's answers.
type APIResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// API POSTs params to the API path and returns the answer, or an error
// when it is not a success.
func (p *Prometheus) API(ctx context.Context, path string, params url.Values) (*APIResponse, error) {
	a, err := fetch(ctx, p.Access, http.MethodPost, p.URL(path), strings.NewReader(params.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	if err != nil {
		return nil, err
	}
	var r APIResponse
	if err := json.Unmarshal(a.body, &r); err != nil {
		return nil, fmt.Errorf("%s %s: %s: %w\n%s", path, params.Get("query"), a.status, err, a.body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s %s: %s: %s: %s", path, params.Get("query"), a.status, r.ErrorType, r.Error)
	}
	return &r, nil
}

// GetAPI GETs an API path (the rules and alerts endpoints take no POST)
// and decodes its data into v.
func (p *Prometheus) GetAPI(ctx context.Context, path string, v any) error {
	a, err := fetch(ctx, p.Access, http.MethodGet, p.URL(path), nil)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(a.body, &env); err != nil || env.Status != "success" {
		return fmt.Errorf("GET %s: %s %v %s", path, a.status, err, env.Error)
	}
	return json.Unmarshal(env.Data, v)
}

// PromTime formats t as the API's time parameter (seconds, milliseconds).
func PromTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// Query evaluates an instant query at time at. An instant vector (or a
// scalar, as a one-sample vector) comes back as a Vector (and Matrix nil);
// a range-vector selector (raw samples) as a Matrix.
func (p *Prometheus) Query(ctx context.Context, q string, at time.Time) (model.Vector, model.Matrix, error) {
	r, err := p.API(ctx, "/api/v1/query", url.Values{"query": {q}, "time": {PromTime(at)}})
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

// Vector evaluates an instant query that must return an instant vector.
func (p *Prometheus) Vector(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	v, m, err := p.Query(ctx, q, at)
	if err == nil && m != nil {
		err = fmt.Errorf("query %s: a range vector, want an instant vector", q)
	}
	return v, err
}

// RawSamples returns the samples Prometheus stored for selector in
// (at-window, at], by series (a range-vector selector: no staleness
// markers, no extrapolation).
func (p *Prometheus) RawSamples(ctx context.Context, selector string, window time.Duration, at time.Time) (model.Matrix, error) {
	q := fmt.Sprintf("%s[%dms]", selector, window.Milliseconds())
	_, m, err := p.Query(ctx, q, at)
	if err == nil && m == nil {
		err = fmt.Errorf("query %s: not a range vector", q)
	}
	return m, err
}

// QueryRange evaluates q at every step from start to end.
func (p *Prometheus) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	r, err := p.API(ctx, "/api/v1/query_range", url.Values{
		"query": {q}, "start": {PromTime(start)}, "end": {PromTime(end)},
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

// ErrNoSeries reports a query that returned no series.
var ErrNoSeries = errors.New("no series")

// ScalarAt evaluates q, which must return exactly one series, at time at.
func (p *Prometheus) ScalarAt(ctx context.Context, q string, at time.Time) (float64, error) {
	v, err := p.Vector(ctx, q, at)
	if err != nil {
		return 0, err
	}
	switch len(v) {
	case 0:
		return 0, fmt.Errorf("%s: %w", q, ErrNoSeries)
	case 1:
		return float64(v[0].Value), nil
	}
	return 0, fmt.Errorf("%s: %d series, want 1: %v", q, len(v), v)
}

// RequestsNot2xx returns the requests the server answered on handler (its
// own prometheus_http_requests_total) with a code other than 2xx, as
// "code: count", and "no request at all on <handler>" when it answered
// none there.
func (p *Prometheus) RequestsNot2xx(t testing.TB, handler string) []string {
	t.Helper()
	mfs, err := scrapeWith(context.Background(), p.Access, p.URL("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	answered := 0.0
	for _, m := range mfs["prometheus_http_requests_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["handler"] != handler {
			continue
		}
		answered += m.GetCounter().GetValue()
		if !strings.HasPrefix(labels["code"], "2") && m.GetCounter().GetValue() > 0 {
			out = append(out, fmt.Sprintf("%s: %v", labels["code"], m.GetCounter().GetValue()))
		}
	}
	if answered == 0 {
		out = append(out, "no request at all on "+handler)
	}
	return out
}

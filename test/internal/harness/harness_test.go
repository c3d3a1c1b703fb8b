// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// The harness's own logic on made-up input, so that a helper that returns
// nothing, or everything, cannot go unnoticed by the system tests that
// trust it.

func TestFindRepoRoot(t *testing.T) {
	root, err := FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Join(root, "test", "internal", "harness"); wd != want {
		t.Errorf("root %s: the test runs in %s, want %s", root, wd, want)
	}
}

func TestCleanEnv(t *testing.T) {
	t.Setenv("ERNIC_RUN_DIR", "/somewhere")
	t.Setenv("GODEBUG", "x=1")
	env := CleanEnv()
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "ERNIC_") }) {
		t.Errorf("CleanEnv() keeps an ERNIC_ variable: %v", env)
	}
	if !slices.Contains(env, "GODEBUG=x=1") {
		t.Errorf("CleanEnv() dropped GODEBUG, which it was not asked to")
	}
	if slices.Contains(CleanEnv("GODEBUG="), "GODEBUG=x=1") {
		t.Errorf(`CleanEnv("GODEBUG=") keeps GODEBUG`)
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Errorf("CleanEnv() dropped PATH")
	}
}

func TestTailAndConfigArgs(t *testing.T) {
	if got := Tail("abcdef", 3); got != "...def" {
		t.Errorf("Tail(abcdef, 3) = %q", got)
	}
	if got := Tail("abc", 3); got != "abc" {
		t.Errorf("Tail(abc, 3) = %q", got)
	}
	if got := ConfigArgs("a.yaml", "b.yaml"); !slices.Equal(got, []string{"--config", "a.yaml", "--config", "b.yaml"}) {
		t.Errorf("ConfigArgs = %v", got)
	}
}

func TestScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			_, _ = w.Write([]byte("# TYPE ernic_x_total counter\nernic_x_total{ernic_id=\"2\"} 42\n"))
		case "/dotted":
			_, _ = w.Write([]byte("# TYPE ernic_x_total counter\n{\"ernic.x\",ernic_id=\"2\"} 42\n"))
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	mfs, err := Scrape(ctx, srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if v := mfs["ernic_x_total"].GetMetric()[0].GetCounter().GetValue(); v != 42 {
		t.Errorf("ernic_x_total = %v, want 42", v)
	}
	if _, err := Scrape(ctx, srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a 404 scrape: err %v, want the status", err)
	}
	if _, err := Scrape(ctx, srv.URL+"/dotted"); err == nil {
		t.Errorf("a name that is no classic Prometheus name was accepted")
	}
}

// fakePrometheus answers /api/v1/query with the JSON answer of the query
// named by the query parameter.
func fakePrometheus(t *testing.T, answers map[string]string) *Prometheus {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/query" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		a, ok := answers[r.FormValue("query")]
		if !ok {
			http.Error(w, `{"status":"error","errorType":"bad_data","error":"unknown query"}`, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(a))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p := &Prometheus{t: t}
	p.Port, _ = strconv.Atoi(port)
	return p
}

func TestPrometheusQueries(t *testing.T) {
	p := fakePrometheus(t, map[string]string{
		"one":       `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1.5,"7"]}]}}`,
		"none":      `{"status":"success","data":{"resultType":"vector","result":[]}}`,
		"two":       `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1.5,"7"]},{"metric":{"a":"2"},"value":[1.5,"8"]}]}}`,
		"scalar":    `{"status":"success","data":{"resultType":"scalar","result":[1.5,"3"]}}`,
		"x[1000ms]": `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[1,"1"],[2,"2"]]}]}}`,
	})
	ctx := context.Background()
	at := time.Unix(1, 0)
	if v, err := p.ScalarAt(ctx, "one", at); err != nil || v != 7 {
		t.Errorf("ScalarAt(one) = %v, %v; want 7", v, err)
	}
	if v, err := p.ScalarAt(ctx, "scalar", at); err != nil || v != 3 {
		t.Errorf("ScalarAt(scalar) = %v, %v; want 3", v, err)
	}
	if _, err := p.ScalarAt(ctx, "none", at); !errors.Is(err, ErrNoSeries) {
		t.Errorf("ScalarAt(none): %v, want ErrNoSeries", err)
	}
	if _, err := p.ScalarAt(ctx, "two", at); err == nil {
		t.Errorf("ScalarAt(two series) succeeded")
	}
	m, err := p.RawSamples(ctx, "x", time.Second, at)
	if err != nil || len(m) != 1 || len(m[0].Values) != 2 || m[0].Values[1].Value != model.SampleValue(2) {
		t.Errorf("RawSamples(x, 1s) = %v, %v; want one series of 2 samples", m, err)
	}
	if _, err := p.Vector(ctx, "x[1000ms]", at); err == nil {
		t.Errorf("Vector of a range selector succeeded")
	}
	if _, _, err := p.Query(ctx, "unknown", at); err == nil || !strings.Contains(err.Error(), "unknown query") {
		t.Errorf("a query Prometheus refuses: err %v, want its error", err)
	}
}

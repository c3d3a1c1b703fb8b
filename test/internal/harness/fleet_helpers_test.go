// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"
)

// The helpers of the fleet test (test/fleet) on made-up input.

// TestRemoteWriteProxy: forwarded as is, then with the timestamps shifted,
// then answered 429 with the Retry-After given; every request recorded.
func TestRemoteWriteProxy(t *testing.T) {
	var mu sync.Mutex
	var got []int64
	target := ServeHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		raw, err := snappy.Decode(nil, body)
		var wr prompb.WriteRequest
		if err == nil {
			err = wr.Unmarshal(raw)
		}
		if err != nil || r.Header.Get("THANOS-TENANT") != "t" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, wr.Timeseries[0].Samples[0].Timestamp)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	p := StartRemoteWriteProxy(t, target+"/api/v1/write")
	post := func() *http.Response {
		t.Helper()
		wr := prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
			Labels: []prompb.Label{{Name: "__name__", Value: "x"}}, Samples: []prompb.Sample{{Value: 1, Timestamp: 1000}},
		}}}
		raw, err := wr.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, p.URL, bytes.NewReader(snappy.Encode(nil, raw)))
		req.Header.Set("THANOS-TENANT", "t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := post(); r.StatusCode != http.StatusNoContent {
		t.Errorf("forwarded: %s", r.Status)
	}
	p.Shift(time.Hour)
	if r := post(); r.StatusCode != http.StatusNoContent {
		t.Errorf("shifted: %s", r.Status)
	}
	p.Throttle("soon")
	if r := post(); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "soon" {
		t.Errorf("throttled: %s, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	p.Forward()
	post()
	if want := []int64{1000, 1000 + time.Hour.Milliseconds(), 1000 + time.Hour.Milliseconds()}; !slices.Equal(got, want) {
		t.Errorf("the target got timestamps %v, want %v", got, want)
	}
	var codes []int
	for _, r := range p.Requests() {
		codes = append(codes, r.Code)
	}
	if want := []int{204, 204, 429, 204}; !slices.Equal(codes, want) {
		t.Errorf("recorded %v, want %v", codes, want)
	}
	if r := p.Requests()[2]; r.RetryAfter != "soon" {
		t.Errorf("the 429 recorded with Retry-After %q", r.RetryAfter)
	}
}

func TestSamplesAndMissing(t *testing.T) {
	m := func(inst string, vals ...float64) model.Matrix {
		s := &model.SampleStream{Metric: model.Metric{"__name__": "ernic_x", "instance": model.LabelValue(inst), "tenant_id": "t"}}
		for i, v := range vals {
			s.Values = append(s.Values, model.SamplePair{Timestamp: model.Time(i * 1000), Value: model.SampleValue(v)})
		}
		return model.Matrix{s}
	}
	want := Samples(m("a", 1, 2, math.NaN()), "tenant_id")
	if len(want) != 3 || want["ernic_x@1"] != 2 {
		t.Fatalf("Samples = %v", want)
	}
	if f := FamilyOf(`ernic_x{a="1"}@1`); f != "ernic_x" {
		t.Errorf("FamilyOf = %q", f)
	}
	missing, differ := Missing(want, Samples(m("b", 1, 3), "tenant_id"))
	if !slices.Equal(missing, []string{"ernic_x@2"}) || !slices.Equal(differ, []string{"ernic_x@1"}) {
		t.Errorf("Missing = %v, %v", missing, differ)
	}
	if missing, differ := Missing(want, want); len(missing)+len(differ) > 0 {
		t.Errorf("the same samples (a NaN among them) differ: %v, %v", missing, differ)
	}
}

func TestUnitEnvironment(t *testing.T) {
	env := UnitEnvironment(t)
	if !slices.Contains(env, "GOMAXPROCS=1") || !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOMEMLIMIT=") }) {
		t.Errorf("UnitEnvironment = %v, want the unit's GOMAXPROCS and GOMEMLIMIT", env)
	}
}

func TestProcessUsage(t *testing.T) {
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	u, err := ProcessUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS == 0 || u.PeakRSS < u.RSS || u.CPU <= 0 {
		t.Errorf("this test's usage: %+v", u)
	}
}

// A fleet takes a hundred ports before its collectors bind them: none twice.
func TestFreePortNeverTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("FreePort returned %d twice", p)
		}
		seen[p] = true
	}
}

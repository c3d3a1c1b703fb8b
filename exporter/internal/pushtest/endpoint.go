// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package pushtest is the push policy's one test, run against each push
// exporter (RunPolicy), and the test endpoint it drives.
package pushtest // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushtest"

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Answer is how an endpoint answers from now on.
type Answer struct {
	// Down: the connection is closed without an answer.
	Down bool
	// Status is an HTTP status (0: accept); a gRPC endpoint maps it to a code.
	Status int
	// RetryAfter is sent with a 429 or 503 (gRPC: RetryInfo, seconds only).
	RetryAfter string
	// Delay is how long an answer takes (a slow backend).
	Delay time.Duration
}

// Endpoint is a backend under the test's control.
type Endpoint interface {
	// URL is what the exporter's endpoint setting gets.
	URL() string
	Answer(Answer)
	// Accepted is the batch numbers of the requests the endpoint took, in order.
	Accepted() []int
	// Points counts the points of the requests the endpoint took.
	Points() int
	// Attempts are the times of the requests that reached it.
	Attempts() []time.Time
}

// Record is what an endpoint keeps; protocol endpoints embed it.
type Record struct {
	mu       sync.Mutex
	answer   Answer
	accepted []int
	points   int
	attempts []time.Time
}

// Answer sets the answer.
func (r *Record) Answer(a Answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = a
}

// Attempt notes a request and returns how to answer it.
func (r *Record) Attempt() Answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, time.Now())
	return r.answer
}

// Take records an accepted request of the given batches and points.
func (r *Record) Take(batches []int, points int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accepted = append(r.accepted, batches...)
	r.points += points
}

func (r *Record) Accepted() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.accepted)
}

func (r *Record) Points() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.points
}

func (r *Record) Attempts() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.attempts)
}

// HTTPEndpoint serves one push protocol over HTTP; decode reads a
// request's batch numbers (the value of every point) and its points.
type HTTPEndpoint struct {
	Record
	url    string
	decode func(*http.Request, []byte) (batches []int, points int, err error)
}

// NewHTTPEndpoint starts an endpoint, closed when t ends.
func NewHTTPEndpoint(t *testing.T, path string, decode func(*http.Request, []byte) ([]int, int, error)) *HTTPEndpoint {
	e := &HTTPEndpoint{decode: decode}
	srv := httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(srv.Close)
	e.url = srv.URL + path
	return e
}

func (e *HTTPEndpoint) URL() string { return e.url }

func (e *HTTPEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	a := e.Attempt()
	time.Sleep(a.Delay)
	if a.Down {
		panic(http.ErrAbortHandler) // the connection closes without an answer
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if a.Status != 0 {
		if a.RetryAfter != "" {
			w.Header().Set("Retry-After", a.RetryAfter)
		}
		http.Error(w, "test endpoint answers "+http.StatusText(a.Status), a.Status)
		return
	}
	batches, points, err := e.decode(r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e.Take(batches, points)
	w.WriteHeader(http.StatusOK)
}

// Batches returns the distinct values in order of first appearance: a
// batch's points all carry its number.
func Batches(values []int64) []int {
	var out []int
	for _, v := range values {
		if !slices.Contains(out, int(v)) {
			out = append(out, int(v))
		}
	}
	return out
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/require"
)

// attempt is one request as a recording endpoint received it.
type attempt struct {
	at     time.Time
	header http.Header
	raw    []byte   // the body, snappy-decoded
	body   [32]byte // sha256 of the compressed body: which request it is
	status int
}

// recorder is a remote-write endpoint that records every attempt and
// answers what answer returns for the n-th attempt (from 0): a status and
// extra response headers.
type recorder struct {
	srv      *httptest.Server
	mu       sync.Mutex
	attempts []attempt
}

func newRecorder(t *testing.T, answer func(n int, h http.Header) (int, http.Header)) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		raw, err := snappy.Decode(nil, body)
		require.NoError(t, err)
		rec.mu.Lock()
		n := len(rec.attempts)
		code, extra := answer(n, r.Header)
		rec.attempts = append(rec.attempts, attempt{at: time.Now(), header: r.Header.Clone(), raw: raw, body: sha256.Sum256(body), status: code})
		rec.mu.Unlock()
		for k, v := range extra {
			w.Header()[k] = v
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

// all returns the attempts so far.
func (rec *recorder) all() []attempt {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]attempt(nil), rec.attempts...)
}

// perBody is the number of attempts of each distinct request, in the order
// they first came.
func (rec *recorder) perBody() []int {
	var out []int
	index := map[[32]byte]int{}
	for _, a := range rec.all() {
		i, ok := index[a.body]
		if !ok {
			i = len(out)
			index[a.body] = i
			out = append(out, 0)
		}
		out[i]++
	}
	return out
}

// count is the number of attempts so far.
func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.attempts)
}

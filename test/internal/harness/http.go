// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// answer is the body and status of an HTTP answer.
type answer struct {
	body   []byte
	code   int
	status string
}

// Access is how a test reaches a server behind TLS and basic auth (a
// Prometheus with --web.config.file): a client that trusts its CA and
// presents a client certificate, and the user and password.
type Access struct {
	Client         *http.Client
	User, Password string
}

// fetch sends a request with the header pairs (name, value, ...) through a
// (nil: http.DefaultClient, no credentials) and returns the answer.
func fetch(ctx context.Context, a *Access, method, url string, body io.Reader, header ...string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return answer{}, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := http.DefaultClient
	if a != nil {
		client = a.Client
		if a.User != "" {
			req.SetBasicAuth(a.User, a.Password)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{body: b, code: resp.StatusCode, status: resp.Status}, err
}

// Scrape fetches and parses the text exposition at url. Legacy validation:
// every family and label name must be a classic Prometheus name.
func Scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	return scrapeWith(ctx, nil, url)
}

// scrapeWith is Scrape through access (nil: none).
func scrapeWith(ctx context.Context, access *Access, url string) (map[string]*dto.MetricFamily, error) {
	a, err := fetch(ctx, access, http.MethodGet, url, nil, "Accept", "text/plain; version=0.0.4")
	if err != nil {
		return nil, err
	}
	if a.code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s\n%s", url, a.status, a.body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(bytes.NewReader(a.body))
}

// ServeHTTP serves handler on a free loopback port until the test ends and
// returns its base URL ("http://127.0.0.1:<port>").
func ServeHTTP(t testing.TB, handler http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: handler}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

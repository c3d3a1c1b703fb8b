// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package tlsreload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
)

const reload = 20 * time.Millisecond

// files is a certificate and key pair on disk.
type files struct{ cert, key string }

func writePair(t *testing.T, p testcert.Pair) files {
	t.Helper()
	dir := t.TempDir()
	f := files{filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")}
	p.Write(t, f.cert, f.key)
	return f
}

// mutualServer is an HTTPS server that requires a client certificate of ca
// and records the subject of each request's.
type mutualServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newMutualServer(t *testing.T, ca *testcert.CA) *mutualServer {
	t.Helper()
	s := &mutualServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.TLS.PeerCertificates[0].Subject.CommonName)
		s.mu.Unlock()
	}))
	s.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.Server(t, "backend").TLS(t)},
		ClientCAs:    testcert.Pool(ca),
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *mutualServer) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[len(s.seen)-1]
}

func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	return zap.New(core), logs
}

// newClient is HTTPClient trusting ca, with the client certificate f (none
// when f is zero), a connection per request: the client certificate is
// chosen at the handshake.
func newClient(t *testing.T, ca *testcert.CA, f files) (*http.Client, *observer.ObservedLogs) {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.PEM, 0o600))
	cc := confighttp.NewDefaultClientConfig()
	cc.TLS.CAFile, cc.TLS.CertFile, cc.TLS.KeyFile, cc.TLS.ReloadInterval = caFile, f.cert, f.key, reload
	cc.Keepalive = configoptional.None[confighttp.KeepaliveClientConfig]()
	logger, logs := observed()
	set := componenttest.NewNopTelemetrySettings()
	set.Logger = logger
	client, err := HTTPClient(context.Background(), cc, componenttest.NewNopHost(), set)
	require.NoError(t, err)
	return client, logs
}

func get(t *testing.T, c *http.Client, url string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestHTTPClientKeepsTheCertificateThatLoaded(t *testing.T) {
	ca := testcert.NewCA(t, "test CA")
	srv := newMutualServer(t, ca)
	f := writePair(t, ca.Client(t, "first"))
	client, logs := newClient(t, ca, f)

	get(t, client, srv.URL)
	assert.Equal(t, "first", srv.last())
	time.Sleep(2 * reload)
	get(t, client, srv.URL)
	assert.Empty(t, logs.All(), "a reload of the same certificate says nothing")

	// Garbage in cert_file: configtls fails the load, the first stays in use.
	testcert.WriteFile(t, f.cert, []byte("not a certificate"))
	time.Sleep(2 * reload)
	get(t, client, srv.URL)
	get(t, client, srv.URL)
	assert.Equal(t, "first", srv.last())
	failed := logs.FilterMessageSnippet("do not load").All()
	require.Len(t, failed, 1, "one line for the files that do not load, not one per handshake")
	assert.Equal(t, zapcore.ErrorLevel, failed[0].Level)
	assert.Equal(t, "CN=first", failed[0].ContextMap()["subject"])

	// A new pair: taken at the next handshake after reload_interval.
	ca.Client(t, "second").Write(t, f.cert, f.key)
	time.Sleep(2 * reload)
	get(t, client, srv.URL)
	assert.Equal(t, "second", srv.last())
	assert.Len(t, logs.FilterMessageSnippet("Loaded the TLS client certificate").All(), 1)
}

// Without a client certificate, a server that requires one refuses the
// connection, and the client says why once, not once per connection.
func TestHTTPClientWithoutCertificateSaysWhy(t *testing.T) {
	ca := testcert.NewCA(t, "test CA")
	srv := newMutualServer(t, ca)
	client, logs := newClient(t, ca, files{})
	for range 3 {
		resp, err := client.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		require.Error(t, err)
	}
	assert.Len(t, logs.FilterMessageSnippet("asks for a TLS client certificate and none is configured").All(), 1)
}

func TestExpiredCertificateIsLogged(t *testing.T) {
	ca := testcert.NewCA(t, "test CA")
	expired := ca.Issue(t, "expired", x509.ExtKeyUsageClientAuth, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
	f := writePair(t, expired)
	logger, logs := observed()
	cfg := configtls.NewDefaultClientConfig()
	cfg.CertFile, cfg.KeyFile = f.cert, f.key
	c, err := ClientTLS(context.Background(), cfg, logger)
	require.NoError(t, err)
	_, err = c.GetClientCertificate(nil)
	require.NoError(t, err)
	lines := logs.FilterMessageSnippet("has expired").All()
	require.Len(t, lines, 1, "once at the start, not again within a minute")
	assert.Equal(t, f.cert, lines[0].ContextMap()["cert_file"])
}

func TestStartFailsOnCertificateThatNeverLoaded(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(cert, []byte("garbage"), 0o600))
	require.NoError(t, os.WriteFile(key, []byte("garbage"), 0o600))
	cfg := configtls.NewDefaultClientConfig()
	cfg.CertFile, cfg.KeyFile = cert, key
	_, err := ClientTLS(context.Background(), cfg, zap.NewNop())
	require.Error(t, err)
	opt, err := GRPCDialOption(context.Background(), configtls.ClientConfig{Insecure: true}, zap.NewNop())
	require.NoError(t, err)
	assert.Nil(t, opt, "no client certificate: configgrpc's credentials stay")
}

func TestListenerKeepsTheCertificateThatLoaded(t *testing.T) {
	ca := testcert.NewCA(t, "test CA")
	f := writePair(t, ca.Server(t, "first"))
	sc := confighttp.NewDefaultServerConfig()
	sc.NetAddr.Endpoint = "127.0.0.1:0"
	tc := configtls.NewDefaultServerConfig()
	tc.CertFile, tc.KeyFile, tc.ReloadInterval = f.cert, f.key, reload
	sc.TLS = configoptional.Some(tc)
	logger, logs := observed()
	ln, err := Listener(context.Background(), sc, logger)
	require.NoError(t, err)
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.NotFoundHandler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	served := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: testcert.Pool(ca), ServerName: "127.0.0.1"})
		require.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	assert.Equal(t, "first", served())
	testcert.WriteFile(t, f.key, []byte("garbage"))
	time.Sleep(2 * reload)
	assert.Equal(t, "first", served())
	assert.Len(t, logs.FilterMessageSnippet("do not load").All(), 1)
	ca.Server(t, "second").Write(t, f.cert, f.key)
	time.Sleep(2 * reload)
	assert.Equal(t, "second", served())
}

func TestErrorLogOnceAMinutePerKind(t *testing.T) {
	logger, logs := observed()
	l := ErrorLog(logger, "scrape refused")
	w := l.Writer().(*sampledWriter)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	for port := range 5 {
		l.Printf("http: TLS handshake error from 127.0.0.1:%d: remote error: tls: bad certificate", 40000+port)
	}
	l.Printf("http: TLS handshake error from 127.0.0.2:40000: EOF")
	for s := range 3 {
		l.Printf("http: TLS handshake error from 127.0.0.3:4000%d: tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-12-07T13:42:0%dZ is after 2026-12-07T12:41:53Z", s, s)
	}
	require.Len(t, logs.All(), 3)
	now = now.Add(Every)
	l.Printf("http: TLS handshake error from 127.0.0.1:50000: remote error: tls: bad certificate")
	all := logs.All()
	require.Len(t, all, 4)
	assert.Equal(t, int64(4), all[3].ContextMap()["like_it_since_last_logged"])
	assert.Equal(t, "scrape refused: http: TLS handshake error from 127.0.0.1:50000: remote error: tls: bad certificate", all[3].Message)
}

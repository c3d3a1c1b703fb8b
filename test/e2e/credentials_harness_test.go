// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// The world of the credentials tests: certificate authorities made at run
// time, credential files rewritten as a rotation rewrites them (a new file
// renamed over the old), and the checks the tests share.

// credReload is the tests' reload_interval of certificate files: a
// rotation is taken within it, at the next connection.
const credReload = time.Second

// credDir is a directory of credential files, mode 0700 as
// /etc/otelcol-ernic/credentials is.
type credDir string

func newCredDir(t *testing.T) credDir {
	t.Helper()
	d := filepath.Join(t.TempDir(), "credentials")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return credDir(d)
}

func (d credDir) path(name string) string { return filepath.Join(string(d), name) }

// write replaces the file name with data through a rename (mode 0600).
func (d credDir) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := d.path(name)
	testcert.WriteFile(t, p, data)
	return p
}

// pair writes p as name.pem and name-key.pem and returns their paths.
func (d credDir) pair(t *testing.T, name string, p testcert.Pair) (cert, key string) {
	t.Helper()
	cert, key = d.path(name+".pem"), d.path(name+"-key.pem")
	p.Write(t, cert, key)
	return cert, key
}

// basicToken is what an Authorization: Basic header carries, the line of a
// token file with scheme Basic.
func basicToken(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}

// bcryptHash is a web configuration's basic_auth_users value; the lowest
// cost, for a test.
func bcryptHash(t *testing.T, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// webConfig is a Prometheus --web.config.file (exporter-toolkit): TLS with
// required client certificates of clientCA, and basic-auth users.
type webConfig struct {
	certFile, keyFile, clientCAFile string
	users                           map[string]string // user: bcrypt hash
}

func (w webConfig) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: %s\nbasic_auth_users:\n",
		w.certFile, w.keyFile, w.clientCAFile)
	for u, h := range w.users {
		fmt.Fprintf(&b, "  %s: %s\n", u, h)
	}
	return b.String()
}

// accessClient is an HTTPS client that trusts ca and presents client.
func accessClient(t *testing.T, ca *testcert.CA, client testcert.Pair) *http.Client {
	t.Helper()
	c := client.TLS(t)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: testcert.Pool(ca), Certificates: []tls.Certificate{c},
	}}}
}

// servedCertificate is the certificate a new TLS connection to addr gets,
// verified against ca, with client presented when not nil.
func servedCertificate(t *testing.T, addr string, ca *testcert.CA, client *testcert.Pair) (*x509.Certificate, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: testcert.Pool(ca), ServerName: "127.0.0.1"}
	if client != nil {
		cfg.Certificates = []tls.Certificate{client.TLS(t)}
	}
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// waitLogged waits until log holds every one of want, or fails the test.
func waitLogged(t *testing.T, log *harness.LockedBuffer, timeout time.Duration, what string, want ...string) {
	t.Helper()
	eventually(t, timeout, what, func() []string {
		var missing []string
		got := log.String()
		for _, w := range want {
			if !strings.Contains(got, w) {
				missing = append(missing, fmt.Sprintf("no %q in the log:\n%s", w, harness.Tail(got, 3000)))
			}
		}
		return missing
	})
}

// lostData are the lines of a collector that lost data: rejected by the
// backend, dropped for the newest, dropped by exporterhelper.
var lostData = []string{"rejected by the endpoint", "dropped the oldest batch", "Dropping data"}

// countLines is how many lines of log contain s.
func countLines(log *harness.LockedBuffer, s string) int {
	n := 0
	for line := range strings.SplitSeq(log.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package switchtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

const (
	credentialsDir = "/etc/otelcol-ernic/credentials"
	dropIn         = "/etc/systemd/system/otelcol-ernic.service.d/credentials.conf"
	// loadedDir is where systemd puts the service's copies ($CREDENTIALS_DIRECTORY).
	loadedDir = "/run/credentials/otelcol-ernic.service"
	stateDir  = "/var/lib/private/otelcol-ernic"
)

// TestCredentialsThroughLoadCredential: the package in a booted Debian,
// and the endpoint put behind TLS, client certificates and tokens as
// deploy/README.md's Credentials section says: the files root's, mode 0600,
// in /etc/otelcol-ernic/credentials, the packaged drop-in's pull block on.
// The service starts with them in its sandbox as it is (LoadCredential=,
// DynamicUser=, PrivateUsers=); a scraper with its certificate and a token
// gets the metrics, one without the token 401, one without a certificate
// nothing. No other user can read the files, systemd's copies of them or
// the state directory. A token added through `systemctl restart` (systemd
// 252 copies credentials at start only) leaves the endpoint without the
// series for less than a scrape interval: at most one scrape missed.
func TestCredentialsThroughLoadCredential(t *testing.T) {
	s := newSetup(t)
	c, port, begin := s.c, s.port, s.begin
	c.Boot(t, 90*time.Second)
	t.Logf("dpkg -i %s:\n%s", filepath.Base(s.deb), c.MustRun(t, "dpkg", "-i", s.debIn))
	wantState(t, c, unit, "active enabled")

	// The files, as an administrator writes them, and the drop-in.
	hostCA, scrapersCA := testcert.NewCA(t, "host CA"), testcert.NewCA(t, "scrapers CA")
	server := hostCA.Server(t, "container")
	for name, data := range map[string][]byte{
		"exporter-cert.pem": server.CertPEM, "exporter-key.pem": server.KeyPEM,
		"exporter-client-ca.pem": scrapersCA.PEM, "exporter-tokens": []byte("token-a\n"),
	} {
		c.WriteFile(t, credentialsDir+"/"+name, data, 0o600)
	}
	c.WriteFile(t, dropIn, harness.CredentialsDropIn(t, harness.PullCredentials, "/usr/bin/otelcol-ernic"), 0o644)
	c.MustRun(t, "systemctl", "daemon-reload")
	c.MustRun(t, "systemctl", "restart", unit)
	wantState(t, c, unit, "active enabled")

	scraper := scrapersCA.Client(t, "prometheus").TLS(t)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: testcert.Pool(hostCA), Certificates: []tls.Certificate{scraper},
	}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", port)
	get := func(c *http.Client, url, token string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body, err := get(client, url, "token-a")
		if err == nil && code == http.StatusOK && strings.Contains(body, probeFamily) {
			break
		}
		if time.Now().After(deadline) {
			journal, _ := c.Run(context.Background(), "journalctl", "--no-pager", "-o", "cat", "-u", unit)
			t.Fatalf("%s with the certificate and the token: %d %v, no %s within 60 s:\n%s", url, code, err, probeName, harness.Tail(journal, 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, _, err := get(client, url, ""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("without the token: %d %v, want 401", code, err)
	}
	plain := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: testcert.Pool(hostCA)}}}
	if code, _, err := get(plain, url, "token-a"); err == nil {
		t.Errorf("without a client certificate: %d, want the handshake refused", code)
	}
	if code, _, err := get(http.DefaultClient, strings.Replace(url, "https:", "http:", 1), "token-a"); err == nil && code == http.StatusOK {
		t.Errorf("over plain HTTP: %d, want no metrics", code)
	}

	// Who can read what: root's files, the service's copies, the state
	// directory; another user (nobody) none of them.
	pid := strings.TrimSpace(c.MustRun(t, "systemctl", "show", "--value", "-p", "MainPID", unit))
	uid := strings.TrimSpace(c.MustRun(t, "stat", "-c", "%u", "/proc/"+pid))
	if uid == "0" || uid == "" {
		t.Fatalf("the service runs as uid %q, want its dynamic user", uid)
	}
	for path, want := range map[string]string{
		credentialsDir:                       "700 0",
		credentialsDir + "/exporter-tokens":  "600 0",
		credentialsDir + "/exporter-key.pem": "600 0",
		loadedDir + "/exporter-tokens":       "400 " + uid,
		loadedDir + "/exporter-key.pem":      "400 " + uid,
		stateDir:                             "700 " + uid,
	} {
		if got := strings.TrimSpace(c.MustRun(t, "stat", "-c", "%a %u", path)); got != want {
			t.Errorf("%s: mode and owner %q, want %q", path, got, want)
		}
	}
	for _, path := range []string{credentialsDir + "/exporter-tokens", loadedDir + "/exporter-tokens", loadedDir + "/exporter-key.pem", stateDir} {
		out, err := c.Run(context.Background(), "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "ls", "-l", path)
		if err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("%s: another user (nobody) lists it: %v\n%s", path, err, out)
		}
	}
	env := c.MustRun(t, "cat", "/proc/"+pid+"/environ")
	if strings.Contains(env, "token-a") {
		t.Errorf("the token is in the service's environment")
	}

	// A second token through a restart: the endpoint's gap.
	polls := startPollerWith(t, client, "Bearer token-a", url, 100*time.Millisecond)
	time.Sleep(2 * time.Second)
	c.WriteFile(t, credentialsDir+"/exporter-tokens", []byte("token-a\ntoken-b\n"), 0o600)
	restartAt := time.Now()
	c.MustRun(t, "systemctl", "restart", unit)
	t.Logf("systemctl restart took %.2f s", time.Since(restartAt).Seconds())
	time.Sleep(8 * time.Second)
	if code, _, err := get(client, url, "token-b"); err != nil || code != http.StatusOK {
		t.Errorf("the new token after the restart: %d %v", code, err)
	}
	gap, down, empty := polls.Gap(restartAt.Add(-time.Second), time.Now())
	t.Logf("rotation by restart: /metrics without the ernic_ series for %d ms (GETs every 100 ms: %d found no listener or a refused handshake, %d no series yet)",
		gap.Milliseconds(), down, empty)
	if gap == 0 || gap >= scrapeInterval {
		t.Errorf("the restart left /metrics without the series for %v, want more than 0 (the poller saw it) and less than the scrape interval %v", gap, scrapeInterval)
	}
	t.Logf("test took %.0f s", time.Since(begin).Seconds())
}

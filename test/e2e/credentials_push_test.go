// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// pushBackend is a Prometheus 3 behind --web.config.file, the remote-write
// and OTLP/HTTP backend: TLS with a certificate of ca, client certificates
// required (of the CAs in clients-ca.pem), basic-auth users. Prometheus
// reads the web configuration again at each connection and request, so the
// test rotates credentials on its side by rewriting the files.
type pushBackend struct {
	prom  *harness.Prometheus
	files credDir
	ca    *testcert.CA // signed the server's certificate
	admin *testcert.CA // the test's own client certificate's
	web   webConfig
}

func startPushBackend(t *testing.T, users map[string]string, clients ...*testcert.CA) *pushBackend {
	t.Helper()
	b := &pushBackend{files: newCredDir(t), ca: testcert.NewCA(t, "backend CA"), admin: testcert.NewCA(t, "test CA")}
	cert, key := b.files.pair(t, "server", b.ca.Server(t, "prometheus"))
	b.web = webConfig{certFile: cert, keyFile: key, clientCAFile: b.files.path("clients-ca.pem"), users: map[string]string{}}
	b.trust(t, clients...)
	adminPassword := "test-password"
	users["test"] = adminPassword
	b.setUsers(t, users)
	otlp, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "deploy", "prometheus", "otlp.yml"))
	if err != nil {
		t.Fatal(err)
	}
	b.prom = harness.NewPrometheus(t, harness.Prometheus3Binary(t), "", 30*time.Second, string(otlp),
		"--web.enable-remote-write-receiver", "--web.enable-otlp-receiver",
		"--web.config.file="+b.files.path("web.yml"))
	b.prom.Access = &harness.Access{Client: accessClient(t, b.ca, b.admin.Client(t, "test")), User: "test", Password: adminPassword}
	b.prom.Start()
	return b
}

// trust makes the client certificates of cas (and the test's) the ones accepted.
func (b *pushBackend) trust(t *testing.T, cas ...*testcert.CA) {
	t.Helper()
	b.files.write(t, "clients-ca.pem", testcert.Bundle(append([]*testcert.CA{b.admin}, cas...)...))
}

// setUsers makes users (name: password) the basic-auth users, the test's kept.
func (b *pushBackend) setUsers(t *testing.T, users map[string]string) {
	t.Helper()
	b.web.users = map[string]string{"test": b.web.users["test"]}
	for u, p := range users {
		b.web.users[u] = bcryptHash(t, p)
	}
	b.files.write(t, "web.yml", []byte(b.web.text()))
}

// restart stops and starts Prometheus on its TSDB: every client connects
// again, with the certificate it has then.
func (b *pushBackend) restart(t *testing.T) {
	t.Helper()
	b.prom.Stop()
	b.prom.Start()
}

// pushHost is a collector with a shipped push configuration and its
// credentials overlay, as a host of the fleet: its own host name, its own
// credential files.
type pushHost struct {
	name     string // ERNIC_HOST, the instance label
	config   string // prometheus-remote-write or otlphttp
	files    credDir
	env      []string
	log      *harness.LockedBuffer
	proc     *harness.Process
	exporter string
}

// pushEndpoints is each push configuration's exporter and endpoint variable
// at a Prometheus.
var pushEndpoints = map[string]struct{ exporter, variable, path string }{
	"prometheus-remote-write": {"remote_write", "ERNIC_REMOTE_WRITE_URL", "/api/v1/write"},
	"otlphttp":                {"otlp_http_durable", "ERNIC_OTLP_ENDPOINT", "/api/v1/otlp"},
}

// newPushHost prepares a host of b with a client certificate of client
// and basic-auth user:password; env overrides its variables.
func newPushHost(t *testing.T, b *pushBackend, runDir, config, name string, client testcert.Pair, user, password string, env ...string) *pushHost {
	t.Helper()
	ep := pushEndpoints[config]
	h := &pushHost{name: name, config: config, files: newCredDir(t), log: &harness.LockedBuffer{}, exporter: ep.exporter}
	cert, key := h.files.pair(t, "push-cert", client)
	h.env = []string{
		"ERNIC_RUN_DIR=" + runDir,
		ep.variable + "=" + b.prom.URL(ep.path),
		"ERNIC_STATE_DIR=" + t.TempDir(),
		"ERNIC_HOST=" + name,
		"ERNIC_PUSH_CA_FILE=" + b.files.write(t, "server-ca.pem", b.ca.PEM),
		"ERNIC_PUSH_CERT_FILE=" + cert,
		"ERNIC_PUSH_KEY_FILE=" + key,
		"ERNIC_PUSH_TOKEN_FILE=" + h.files.write(t, "push-token", []byte(basicToken(user, password)+"\n")),
		"ERNIC_PUSH_AUTH_SCHEME=Basic",
	}
	h.env = append(h.env, env...) // later entries win
	return h
}

func (h *pushHost) start(t *testing.T) *pushHost {
	t.Helper()
	root := harness.RepoRoot(t)
	override := fastQueueOverride(t, h.exporter, 200*time.Millisecond, fmt.Sprintf("    tls:\n      reload_interval: %s\n", credReload))
	h.proc = runCollectorLog(t, h.env, h.log,
		filepath.Join(root, "config", h.config+".yaml"), filepath.Join(root, "config", h.config+"-auth.yaml"), override)
	return h
}

// pushRefusal is a wrong credential a backend must refuse, and what the
// host then logs: its own line for what it knows (no certificate, an
// expired one), as a server's refusal after a TLS 1.3 handshake reaches
// the client as a broken connection.
type pushRefusal struct {
	name   string
	config string
	// password replaces the right one; env overrides the host's variables;
	// client replaces its certificate.
	password string
	env      func(t *testing.T) []string
	client   func(t *testing.T, ca *testcert.CA) testcert.Pair
	logs     []string
}

var pushRefusals = []pushRefusal{
	{name: "wrong password", config: "prometheus-remote-write", password: "wrong",
		logs: []string{"request rejected by the endpoint", "401 Unauthorized"}},
	{name: "wrong password", config: "otlphttp", password: "wrong",
		logs: []string{"request rejected by the endpoint", "401 Unauthorized"}},
	{name: "no client certificate", config: "prometheus-remote-write",
		env:  func(*testing.T) []string { return []string{"ERNIC_PUSH_CERT_FILE=", "ERNIC_PUSH_KEY_FILE="} },
		logs: []string{"failed; the batch waits in the queue", "The server asks for a TLS client certificate and none is configured"}},
	{name: "untrusted CA", config: "prometheus-remote-write",
		env: func(t *testing.T) []string {
			return []string{"ERNIC_PUSH_CA_FILE=" + harness.WriteFile(t, "other-ca.pem", string(testcert.NewCA(t, "another CA").PEM))}
		},
		logs: []string{"failed; the batch waits in the queue", "certificate signed by unknown authority"}},
	{name: "expired certificate", config: "prometheus-remote-write",
		client: func(t *testing.T, ca *testcert.CA) testcert.Pair {
			return ca.Issue(t, "expired", x509.ExtKeyUsageClientAuth, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
		},
		logs: []string{"The TLS client certificate in use has expired", "failed; the batch waits in the queue"}},
}

// TestPushCredentialsPrometheus3: remote write and OTLP/HTTP, with the
// shipped configurations and their credentials overlays, into Prometheus 3
// behind TLS, required client certificates and basic auth. Both hosts'
// data arrives; wrong credentials are refused and the host says why. Mid-run,
// in the order deploy/README.md gives, the password is rotated (the backend
// takes the old and the new user, the host's file changes, the old user
// goes), the client certificate file is replaced by garbage (the
// certificate that loaded stays in use, logged) and then by a certificate
// of a new CA (the backend trusts both, then only the new one), with
// Prometheus restarted after each so that every connection is made again.
// Every scrape of the window is in Prometheus: no sample lost.
func TestPushCredentialsPrometheus3(t *testing.T) {
	t.Parallel()
	oldCA, newCA := testcert.NewCA(t, "clients CA 1"), testcert.NewCA(t, "clients CA 2")
	b := startPushBackend(t, map[string]string{"ernic-a": "password-a"}, oldCA)
	runDir := t.TempDir()
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 54})

	hosts := []*pushHost{
		newPushHost(t, b, runDir, "prometheus-remote-write", "rw-host", oldCA.Client(t, "rw-host"), "ernic-a", "password-a").start(t),
		newPushHost(t, b, runDir, "otlphttp", "otlphttp-host", oldCA.Client(t, "otlphttp-host"), "ernic-a", "password-a").start(t),
	}
	var refused []*pushHost
	for i, r := range pushRefusals {
		client, password, env := oldCA.Client(t, "refused"), "password-a", []string(nil)
		if r.client != nil {
			client = r.client(t, oldCA)
		}
		if r.password != "" {
			password = r.password
		}
		if r.env != nil {
			env = r.env(t)
		}
		refused = append(refused, newPushHost(t, b, runDir, r.config, fmt.Sprintf("refused-%d", i), client, "ernic-a", password, env...).start(t))
	}

	ctx := context.Background()
	fresh := func(what string) {
		t.Helper()
		eventually(t, waitTimeout, what, func() []string {
			var problems []string
			for _, h := range hosts {
				age, err := newestAge(ctx, b.prom, fmt.Sprintf(`ernic_instances{instance=%q}`, h.name))
				if err != nil || age > 3*time.Second {
					problems = append(problems, fmt.Sprintf("%s: newest sample %v old (%v)", h.name, age.Round(time.Millisecond), err))
				}
			}
			return problems
		})
	}
	fresh("both hosts' data in Prometheus")
	for i, r := range pushRefusals {
		waitLogged(t, refused[i].log, 20*time.Second, r.config+", "+r.name+": refused, and the host says why", r.logs...)
		refused[i].proc.Stop(15 * time.Second)
	}
	for i, r := range pushRefusals {
		v, err := b.prom.Vector(ctx, fmt.Sprintf(`count({instance=%q})`, refused[i].name), time.Now())
		if err != nil || len(v) != 0 {
			t.Errorf("%s, %s: Prometheus holds its series: %v %v", r.config, r.name, v, err)
		}
	}

	from := time.Now()
	// The password: the backend takes the old and the new user, the hosts'
	// files change, the old user goes.
	b.setUsers(t, map[string]string{"ernic-a": "password-a", "ernic-b": "password-b"})
	read := map[string]int{}
	for _, h := range hosts {
		read[h.name] = countLines(h.log, "refresh token")
		h.files.write(t, "push-token", []byte(basicToken("ernic-b", "password-b")+"\n"))
	}
	for _, h := range hosts {
		eventually(t, 10*time.Second, h.name+" reads the new password", func() []string {
			if countLines(h.log, "refresh token") == read[h.name] {
				return []string{"no \"refresh token\" since the file changed"}
			}
			return nil
		})
	}
	time.Sleep(2 * time.Second)
	b.setUsers(t, map[string]string{"ernic-b": "password-b"})
	time.Sleep(3 * time.Second)
	fresh("data after the password rotation")
	// Not one request failed or was refused for it.
	for _, h := range hosts {
		for _, bad := range []string{"failed; the batch waits", "rejected by the endpoint"} {
			if n := countLines(h.log, bad); n > 0 {
				t.Errorf("%s: %d lines %q in the password rotation:\n%s", h.name, n, bad, harness.Tail(h.log.String(), 4000))
			}
		}
	}

	// Garbage in the certificate files: a connection made now keeps the
	// certificate that loaded, and says so.
	for _, h := range hosts {
		h.files.write(t, "push-cert.pem", []byte("-----BEGIN CERTIFICATE-----\ngarbage\n"))
	}
	time.Sleep(2 * credReload)
	b.restart(t)
	fresh("data after Prometheus' restart with the certificate files garbage")
	for _, h := range hosts {
		waitLogged(t, h.log, 10*time.Second, h.name+" keeps its certificate", "The TLS client certificate files do not load; the certificate loaded before stays in use")
	}

	// A certificate of a new CA: the backend trusts both, the hosts' files
	// change, the backend trusts the new CA only; the connections made
	// after the restart must present the new certificate.
	for _, h := range hosts {
		if n := countLines(h.log, "Loaded the TLS client certificate"); n != 0 {
			t.Errorf("%s: %d lines \"Loaded the TLS client certificate\" before its files changed", h.name, n)
		}
	}
	b.trust(t, oldCA, newCA)
	for _, h := range hosts {
		h.files.pair(t, "push-cert", newCA.Client(t, h.name))
	}
	time.Sleep(2 * credReload)
	b.trust(t, newCA)
	b.restart(t)
	fresh("data with the new CA's certificates, after Prometheus' restart")
	for _, h := range hosts {
		waitLogged(t, h.log, 10*time.Second, h.name+" loads the new certificate", "Loaded the TLS client certificate")
	}
	time.Sleep(3 * time.Second)
	to := time.Now().Add(-2 * time.Second)

	// Every scrape of each host from before the rotation to now is in
	// Prometheus, and nothing was rejected on the way.
	for _, h := range hosts {
		m, err := b.prom.RawSamples(ctx, fmt.Sprintf(`ernic_instances{instance=%q}`, h.name), to.Sub(from)+5*time.Second, to)
		if err != nil || len(m) != 1 {
			t.Fatalf("%s: raw samples: %v %v", h.name, m, err)
		}
		samples := m[0].Values
		if g := gaps(samples, time.Second); len(g) > 0 {
			t.Errorf("%s: samples missing across the rotations: %+v", h.name, g)
		}
		t.Logf("%s: %d samples from %s to %s, first %s, last %s", h.name, len(samples), from.Format(time.StampMilli), to.Format(time.StampMilli),
			samples[0].Timestamp.Time().Format(time.StampMilli), samples[len(samples)-1].Timestamp.Time().Format(time.StampMilli))
		for _, bad := range lostData {
			if n := countLines(h.log, bad); n > 0 {
				t.Errorf("%s: %d lines %q during the rotations:\n%s", h.name, n, bad, harness.Tail(h.log.String(), 4000))
			}
		}
		if !strings.Contains(h.log.String(), "Everything is ready") {
			t.Errorf("%s: not started", h.name)
		}
	}
}

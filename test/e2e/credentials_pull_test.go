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
	"strconv"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// scrapeJob is deploy/prometheus/scrape-tls.yml's job with the test's
// files and target, and a name.
func scrapeJob(t *testing.T, name, target, caFile, certFile, keyFile, tokenFile string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "deploy", "prometheus", "scrape-tls.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ScrapeConfigs []map[string]any `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.ScrapeConfigs) != 1 {
		t.Fatalf("deploy/prometheus/scrape-tls.yml: %v, %d jobs", err, len(doc.ScrapeConfigs))
	}
	job := doc.ScrapeConfigs[0]
	job["job_name"] = name
	job["scrape_interval"], job["scrape_timeout"] = "1s", "1s"
	tc := map[string]any{"ca_file": caFile}
	if certFile != "" {
		tc["cert_file"], tc["key_file"] = certFile, keyFile
	}
	job["tls_config"] = tc
	job["authorization"] = map[string]any{"credentials_file": tokenFile}
	job["static_configs"] = []map[string]any{{"targets": []string{target}}}
	return job
}

// TestPullCredentials: config/local.yaml with config/local-tls.yaml, the
// endpoint behind TLS, required client certificates and bearer tokens,
// scraped every second by Debian's Prometheus with
// deploy/prometheus/scrape-tls.yml's job. The job gets the metrics; jobs
// with no client certificate, a CA that did not sign the endpoint's, a
// wrong token and an expired client certificate are refused (their up is
// 0) and the host logs each kind once. Mid-run, in the order
// deploy/README.md gives, the token is rotated (the host takes both, the
// scraper's file changes, the host takes the new one only), the
// endpoint's certificate is replaced (a new connection gets the new one),
// then replaced by garbage (a new connection still gets it; logged), and
// the scrapers' CA is rotated (the host trusts both, then the new one).
// The job's scrapes all succeed: up is 1 at each, and every one is there.
func TestPullCredentials(t *testing.T) {
	t.Parallel()
	hostCA, scrapersCA, newScrapersCA := testcert.NewCA(t, "host CA"), testcert.NewCA(t, "scrapers CA 1"), testcert.NewCA(t, "scrapers CA 2")
	host, scraper := newCredDir(t), newCredDir(t)
	certFile, keyFile := host.pair(t, "exporter-cert", hostCA.Server(t, "host-1"))
	clientCAFile := host.write(t, "exporter-client-ca.pem", scrapersCA.PEM)
	tokensFile := host.write(t, "exporter-tokens", []byte("token-a\n"))

	runDir, port := t.TempDir(), harness.FreePort(t)
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 56})
	root := harness.RepoRoot(t)
	override := harness.WriteFile(t, "pull-fast.yaml", fmt.Sprintf(`receivers:
  ernic:
    collection_interval: 1s
exporters:
  prometheus_text:
    tls:
      reload_interval: %s
`, credReload))
	log := &harness.LockedBuffer{}
	runCollectorLog(t, []string{
		"ERNIC_RUN_DIR=" + runDir,
		"ERNIC_EXPORTER_PORT=" + strconv.Itoa(port),
		"ERNIC_HEALTH_PORT=" + strconv.Itoa(harness.FreePort(t)),
		"ERNIC_EXPORTER_CERT_FILE=" + certFile,
		"ERNIC_EXPORTER_KEY_FILE=" + keyFile,
		"ERNIC_EXPORTER_CLIENT_CA_FILE=" + clientCAFile,
		"ERNIC_EXPORTER_TOKEN_FILE=" + tokensFile,
	}, log, filepath.Join(root, "config", "local.yaml"), filepath.Join(root, "config", "local-tls.yaml"), override)

	target := "127.0.0.1:" + strconv.Itoa(port)
	hostCAFile := scraper.write(t, "ca.pem", hostCA.PEM)
	scraperCert, scraperKey := scraper.pair(t, "scraper", scrapersCA.Client(t, "prometheus"))
	tokenFile := scraper.write(t, "token", []byte("token-a\n"))
	expiredCert, expiredKey := scraper.pair(t, "expired", scrapersCA.Issue(t, "expired", x509.ExtKeyUsageClientAuth, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)))
	jobs := []map[string]any{
		scrapeJob(t, "ernic", target, hostCAFile, scraperCert, scraperKey, tokenFile),
		scrapeJob(t, "no-client-certificate", target, hostCAFile, "", "", tokenFile),
		scrapeJob(t, "untrusted-ca", target, scraper.write(t, "other-ca.pem", testcert.NewCA(t, "another CA").PEM), scraperCert, scraperKey, tokenFile),
		scrapeJob(t, "wrong-token", target, hostCAFile, scraperCert, scraperKey, scraper.write(t, "wrong-token", []byte("token-wrong\n"))),
		scrapeJob(t, "expired-certificate", target, hostCAFile, expiredCert, expiredKey, tokenFile),
	}
	conf, err := yaml.Marshal(map[string]any{"global": map[string]any{"scrape_interval": "1s"}, "scrape_configs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	prom := harness.StartPrometheus(t, harness.PrometheusBinary(t), "", 30*time.Second, string(conf))
	ctx := context.Background()

	up := func(job string) (float64, error) {
		return prom.ScalarAt(ctx, fmt.Sprintf(`up{job=%q}`, job), time.Now())
	}
	eventually(t, waitTimeout, "the job's scrapes succeed, the others' fail", func() []string {
		var problems []string
		for _, j := range jobs {
			name := j["job_name"].(string)
			want := 0.0
			if name == "ernic" {
				want = 1
			}
			if v, err := up(name); err != nil || v != want {
				problems = append(problems, fmt.Sprintf("up{job=%q} = %v (%v), want %v", name, v, err, want))
			}
		}
		if n, err := prom.ScalarAt(ctx, `count(ernic_instance_up{job="ernic"})`, time.Now()); err != nil || n != 2 {
			problems = append(problems, fmt.Sprintf("ernic_instance_up of the job: %v series (%v), want 2", n, err))
		}
		return problems
	})
	waitLogged(t, log, 10*time.Second, "the host logs each kind of refusal",
		"tls: client didn't provide a certificate",
		"remote error: tls: bad certificate",
		"refused GET /metrics from 127.0.0.1:",
		"x509: certificate has expired")
	time.Sleep(3 * time.Second) // a few more refusals of each kind
	for _, kind := range []string{"client didn't provide a certificate", "refused GET /metrics", "certificate has expired"} {
		if n := countLines(log, kind); n != 1 {
			t.Errorf("%d lines %q, want 1: once a minute per kind", n, kind)
		}
	}

	from := time.Now()
	// The token: the host takes both, the scraper's file changes, the host
	// takes the new one only.
	host.write(t, "exporter-tokens", []byte("token-a\ntoken-b\n"))
	time.Sleep(2 * time.Second)
	scraper.write(t, "token", []byte("token-b\n"))
	time.Sleep(2 * time.Second)
	host.write(t, "exporter-tokens", []byte("token-b\n"))
	time.Sleep(2 * time.Second)

	// The endpoint's certificate, then garbage in its key file.
	served := func(client testcert.Pair) (string, error) {
		c, err := servedCertificate(t, target, hostCA, &client)
		if err != nil {
			return "", err
		}
		return c.Subject.CommonName, nil
	}
	probe := scrapersCA.Client(t, "probe")
	host.pair(t, "exporter-cert", hostCA.Server(t, "host-2"))
	time.Sleep(2 * credReload)
	if cn, err := served(probe); err != nil || cn != "host-2" {
		t.Errorf("a new connection after the certificate changed got %q (%v), want host-2", cn, err)
	}
	host.write(t, "exporter-cert-key.pem", []byte("garbage"))
	time.Sleep(2 * credReload)
	if cn, err := served(probe); err != nil || cn != "host-2" {
		t.Errorf("a new connection after the key file turned garbage got %q (%v), want host-2, the certificate that loaded", cn, err)
	}
	waitLogged(t, log, 5*time.Second, "the host keeps its certificate", "The TLS server certificate files do not load; the certificate loaded before stays in use")

	// The scrapers' CA: the host trusts both, then the new one only.
	host.write(t, "exporter-client-ca.pem", testcert.Bundle(scrapersCA, newScrapersCA))
	time.Sleep(2 * time.Second)
	newProbe := newScrapersCA.Client(t, "new probe")
	if _, err := served(newProbe); err != nil {
		t.Errorf("a client certificate of the new CA, both trusted: %v", err)
	}
	host.write(t, "exporter-client-ca.pem", newScrapersCA.PEM)
	time.Sleep(2 * time.Second)
	if _, err := served(newProbe); err != nil {
		t.Errorf("a client certificate of the new CA, it alone trusted: %v", err)
	}
	time.Sleep(2 * time.Second)
	to := time.Now()

	// Each of the job's scrapes in the window succeeded and holds the data.
	window := to.Sub(from)
	m, err := prom.RawSamples(ctx, `up{job="ernic"}`, window, to)
	if err != nil || len(m) != 1 {
		t.Fatalf("up of the job: %v %v", m, err)
	}
	for _, s := range m[0].Values {
		if s.Value != 1 {
			t.Errorf("a scrape of the job failed at %s", s.Timestamp.Time().Format(time.StampMilli))
		}
	}
	if g := gaps(m[0].Values, time.Second); len(g) > 0 {
		t.Errorf("scrapes of the job missing: %+v", g)
	}
	d, err := prom.RawSamples(ctx, `ernic_instances{job="ernic"}`, window, to)
	if err != nil || len(d) != 1 || len(d[0].Values) != len(m[0].Values) {
		t.Errorf("ernic_instances of the job: %v (%v), want a sample at each of the %d scrapes", d, err, len(m[0].Values))
	}
	t.Logf("the job's %d scrapes over %v across the rotations: all up", len(m[0].Values), window.Round(time.Millisecond))
}

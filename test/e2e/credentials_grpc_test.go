// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// grpcGateway is the second collector (the test build): an OTLP/gRPC
// receiver behind TLS with required client certificates (of the CAs in
// clients-ca.pem, read again when it changes) and contrib's bearertokenauth
// (the tokens in its file, read again when it changes), passing what it
// takes on to the test's sink with no queue of its own, so that a request
// is accepted only once the sink has it.
type grpcGateway struct {
	port   int
	files  credDir
	ca     *testcert.CA
	config string
	sink   *otlpSink
	proc   *harness.Process
}

func startGRPCGateway(t *testing.T, tokens []string, clients ...*testcert.CA) *grpcGateway {
	t.Helper()
	g := &grpcGateway{port: harness.FreePort(t), files: newCredDir(t), ca: testcert.NewCA(t, "gateway CA"), sink: startSink(t)}
	cert, key := g.files.pair(t, "server", g.ca.Server(t, "gateway"))
	g.trust(t, clients...)
	g.setTokens(t, tokens...)
	g.config = harness.WriteFile(t, "gateway.yaml", fmt.Sprintf(`extensions:
  bearertokenauth/in:
    filename: %s
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
        tls:
          cert_file: %s
          key_file: %s
          client_ca_file: %s
          client_ca_file_reload: true
        auth:
          authenticator: bearertokenauth/in
exporters:
  otlp_http:
    metrics_endpoint: %s
    encoding: json
    compression: none
    sending_queue:
      enabled: false
service:
  extensions: [bearertokenauth/in]
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [otlp_http]
  telemetry:
    metrics:
      level: none
`, g.files.path("tokens"), g.port, cert, key, g.files.path("clients-ca.pem"), g.sink.url))
	g.start(t)
	return g
}

func (g *grpcGateway) start(t *testing.T) {
	t.Helper()
	g.proc = harness.StartTestBuildCollector(t, harness.ConfigArgs(g.config), nil, nil, false)
}

// restart stops and starts the gateway: every client connects again.
func (g *grpcGateway) restart(t *testing.T) {
	t.Helper()
	g.proc.Stop(15 * time.Second)
	g.start(t)
}

func (g *grpcGateway) trust(t *testing.T, cas ...*testcert.CA) {
	t.Helper()
	g.files.write(t, "clients-ca.pem", testcert.Bundle(cas...))
}

// setTokens makes tokens the ones accepted, one a line.
func (g *grpcGateway) setTokens(t *testing.T, tokens ...string) {
	t.Helper()
	g.files.write(t, "tokens", []byte(strings.Join(tokens, "\n")+"\n"))
}

// scrapes is the times of the ernic.instances points of host the sink got,
// sorted, each once: one per scrape of the host.
func (g *grpcGateway) scrapes(host string) []model.SamplePair {
	seen := map[int64]bool{}
	var out []model.SamplePair
	for _, md := range g.sink.batches() {
		rms := md.ResourceMetrics()
		for i := range rms.Len() {
			if v, ok := rms.At(i).Resource().Attributes().Get("host.name"); !ok || v.Str() != host {
				continue
			}
			sms := rms.At(i).ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					if ms.At(k).Name() != "ernic.instances" || ms.At(k).Type() != pmetric.MetricTypeGauge {
						continue
					}
					dps := ms.At(k).Gauge().DataPoints()
					for p := range dps.Len() {
						ts := model.TimeFromUnixNano(dps.At(p).Timestamp().AsTime().UnixNano())
						if !seen[int64(ts)] {
							seen[int64(ts)] = true
							out = append(out, model.SamplePair{Timestamp: ts, Value: model.SampleValue(dps.At(p).IntValue())})
						}
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b model.SamplePair) int { return int(a.Timestamp - b.Timestamp) })
	return out
}

// grpcHost is a host with config/otlp.yaml and config/otlp-auth.yaml to g:
// a client certificate and a bearer token; env overrides its variables.
func startGRPCHost(t *testing.T, g *grpcGateway, runDir, name string, client testcert.Pair, token string, env ...string) *pushHost {
	t.Helper()
	h := &pushHost{name: name, config: "otlp", files: newCredDir(t), log: &harness.LockedBuffer{}, exporter: "otlp_durable"}
	cert, key := h.files.pair(t, "push-cert", client)
	h.env = append([]string{
		"ERNIC_RUN_DIR=" + runDir,
		"ERNIC_OTLP_ENDPOINT=127.0.0.1:" + strconv.Itoa(g.port),
		"ERNIC_STATE_DIR=" + t.TempDir(),
		"ERNIC_HOST=" + name,
		"ERNIC_PUSH_CA_FILE=" + g.files.write(t, "server-ca.pem", g.ca.PEM),
		"ERNIC_PUSH_CERT_FILE=" + cert,
		"ERNIC_PUSH_KEY_FILE=" + key,
		"ERNIC_PUSH_TOKEN_FILE=" + h.files.write(t, "push-token", []byte(token+"\n")),
	}, env...)
	return h.start(t)
}

// TestOTLPGRPCCredentials: config/otlp.yaml with config/otlp-auth.yaml
// into a second collector whose OTLP/gRPC receiver takes TLS with
// required client certificates and bearer tokens (bearertokenauth). The
// data arrives; a wrong token, no client certificate, an untrusted server
// CA and an expired certificate are refused and the host says why.
// Mid-run, in the order deploy/README.md gives, the token is rotated (the
// gateway takes both, the host's file changes, the gateway takes the new
// one only), the client certificate file is replaced by garbage (kept,
// logged) and then by a certificate of a new CA (the gateway trusts both,
// then the new one), with the gateway restarted after each so that the
// connection is made again. Every scrape of the host reaches the sink.
func TestOTLPGRPCCredentials(t *testing.T) {
	t.Parallel()
	oldCA, newCA := testcert.NewCA(t, "clients CA 1"), testcert.NewCA(t, "clients CA 2")
	g := startGRPCGateway(t, []string{"token-a"}, oldCA)
	runDir := t.TempDir()
	harness.StartSim(t, sim.Options{RunDir: runDir, Instances: 2, QPs: 2, Interval: 500 * time.Millisecond, Seed: 55})
	h := startGRPCHost(t, g, runDir, "grpc-host", oldCA.Client(t, "grpc-host"), "token-a")

	refusals := []struct {
		name   string
		client testcert.Pair
		token  string
		env    []string
		logs   []string
	}{
		{name: "wrong token", client: oldCA.Client(t, "refused"), token: "token-wrong",
			logs: []string{"request rejected by the endpoint", "Unauthenticated"}},
		{name: "no client certificate", client: oldCA.Client(t, "refused"), token: "token-a",
			env:  []string{"ERNIC_PUSH_CERT_FILE=", "ERNIC_PUSH_KEY_FILE="},
			logs: []string{"The server asks for a TLS client certificate and none is configured", "failed; the batch waits in the queue"}},
		{name: "untrusted CA", client: oldCA.Client(t, "refused"), token: "token-a",
			env:  []string{"ERNIC_PUSH_CA_FILE=" + harness.WriteFile(t, "other-ca.pem", string(testcert.NewCA(t, "another CA").PEM))},
			logs: []string{"certificate signed by unknown authority", "failed; the batch waits in the queue"}},
		{name: "expired certificate", token: "token-a",
			client: oldCA.Issue(t, "expired", x509.ExtKeyUsageClientAuth, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)),
			logs:   []string{"The TLS client certificate in use has expired", "failed; the batch waits in the queue"}},
	}
	var refused []*pushHost
	for i, r := range refusals {
		refused = append(refused, startGRPCHost(t, g, runDir, fmt.Sprintf("refused-%d", i), r.client, r.token, r.env...))
	}

	arrived := func(what string) {
		t.Helper()
		eventually(t, waitTimeout, what, func() []string {
			s := g.scrapes(h.name)
			if len(s) == 0 || time.Since(s[len(s)-1].Timestamp.Time()) > 3*time.Second {
				return []string{fmt.Sprintf("%d scrapes of %s at the sink, none in the last 3 s", len(s), h.name)}
			}
			return nil
		})
	}
	arrived("the host's data through the gateway")
	for i, r := range refusals {
		waitLogged(t, refused[i].log, 20*time.Second, r.name+": refused, and the host says why", r.logs...)
		refused[i].proc.Stop(15 * time.Second)
		if s := g.scrapes(refused[i].name); len(s) > 0 {
			t.Errorf("%s: %d scrapes reached the sink", r.name, len(s))
		}
	}

	from := time.Now()
	// The token: the gateway takes both, the host's file changes, the
	// gateway takes the new one only.
	g.setTokens(t, "token-a", "token-b")
	time.Sleep(time.Second)
	read := countLines(h.log, "refresh token")
	h.files.write(t, "push-token", []byte("token-b\n"))
	eventually(t, 10*time.Second, "the host reads the new token", func() []string {
		if countLines(h.log, "refresh token") == read {
			return []string{"no \"refresh token\" since the file changed"}
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	g.setTokens(t, "token-b")
	time.Sleep(3 * time.Second)
	arrived("data after the token rotation")
	for _, bad := range []string{"failed; the batch waits", "rejected by the endpoint"} {
		if n := countLines(h.log, bad); n > 0 {
			t.Errorf("%d lines %q in the token rotation:\n%s", n, bad, harness.Tail(h.log.String(), 4000))
		}
	}

	// Garbage in the certificate file: the connection made after the
	// gateway's restart keeps the certificate that loaded.
	h.files.write(t, "push-cert.pem", []byte("garbage"))
	time.Sleep(2 * credReload)
	g.restart(t)
	arrived("data after the gateway's restart with the certificate file garbage")
	waitLogged(t, h.log, 10*time.Second, "the host keeps its certificate", "The TLS client certificate files do not load; the certificate loaded before stays in use")

	// A certificate of a new CA.
	if n := countLines(h.log, "Loaded the TLS client certificate"); n != 0 {
		t.Errorf("%d lines \"Loaded the TLS client certificate\" before its files changed", n)
	}
	g.trust(t, oldCA, newCA)
	h.files.pair(t, "push-cert", newCA.Client(t, h.name))
	time.Sleep(2 * credReload)
	g.trust(t, newCA)
	g.restart(t)
	arrived("data with the new CA's certificate, after the gateway's restart")
	waitLogged(t, h.log, 10*time.Second, "the host loads the new certificate", "Loaded the TLS client certificate")
	time.Sleep(3 * time.Second)

	// Every scrape from before the rotations to now reached the sink.
	var window []model.SamplePair
	for _, s := range g.scrapes(h.name) {
		if s.Timestamp.Time().After(from.Add(-5 * time.Second)) {
			window = append(window, s)
		}
	}
	if len(window) < 10 {
		t.Fatalf("%d scrapes in the window", len(window))
	}
	if gs := gaps(window, time.Second); len(gs) > 0 {
		t.Errorf("scrapes missing across the rotations: %+v", gs)
	}
	t.Logf("%s: %d scrapes from %s to %s", h.name, len(window), window[0].Timestamp.Time().Format(time.StampMilli),
		window[len(window)-1].Timestamp.Time().Format(time.StampMilli))
	for _, bad := range lostData {
		if n := countLines(h.log, bad); n > 0 {
			t.Errorf("%d lines %q:\n%s", n, bad, harness.Tail(h.log.String(), 4000))
		}
	}
}

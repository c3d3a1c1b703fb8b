// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/internal/testcert"
)

// tokenAuth is a server authenticator that takes one Authorization value.
type tokenAuth struct {
	component.StartFunc
	component.ShutdownFunc
	want string
}

func (a tokenAuth) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	if v := headers["Authorization"]; len(v) == 1 && v[0] == a.want {
		return ctx, nil
	}
	return ctx, errors.New("wrong or no credentials")
}

var _ extensionauth.Server = tokenAuth{}

// hostWith is a host with the extensions given.
type hostWith struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h hostWith) GetExtensions() map[component.ID]component.Component { return h.exts }

// The endpoint behind TLS with required client certificates and an
// authenticator: a scraper with both gets the metrics; one with a wrong
// token gets 401, one without a certificate fails its handshake, and each
// kind of refusal is logged once, not once per scrape.
func TestServedOverTLSWithClientCertificatesAndCredentials(t *testing.T) {
	ca := testcert.NewCA(t, "test CA")
	dir := t.TempDir()
	certFile, keyFile, caFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "ca.pem")
	ca.Server(t, "host").Write(t, certFile, keyFile)
	require.NoError(t, os.WriteFile(caFile, ca.PEM, 0o600))

	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	tc := configtls.NewDefaultServerConfig()
	tc.CertFile, tc.KeyFile, tc.ClientCAFile = certFile, keyFile, caFile
	cfg.TLS = configoptional.Some(tc)
	authID := component.MustNewID("tokenauth")
	cfg.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: authID}})
	core, logs := observer.New(zapcore.InfoLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	e := newExporter(set, cfg)
	host := hostWith{componenttest.NewNopHost(), map[component.ID]component.Component{authID: tokenAuth{want: "Bearer right"}}}
	require.NoError(t, e.Start(context.Background(), host))
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	require.NoError(t, e.ConsumeMetrics(context.Background(), batch("", 5)))

	scrape := func(cert *tls.Certificate, token string) (int, error) {
		tc := &tls.Config{RootCAs: testcert.Pool(ca), ServerName: "127.0.0.1"}
		if cert != nil {
			tc.Certificates = []tls.Certificate{*cert}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 5 * time.Second}
		defer c.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodGet, "https://"+e.addr.String()+"/metrics", nil)
		req.Header.Set("Authorization", token)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	scraper := ca.Client(t, "prometheus").TLS(t)
	code, err := scrape(&scraper, "Bearer right")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)

	for range 3 {
		code, err = scrape(&scraper, "Bearer wrong")
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, code)
		_, err = scrape(nil, "Bearer right")
		require.Error(t, err, "no client certificate")
	}
	refused := logs.FilterMessageSnippet("refused GET /metrics from 127.0.0.1:").All()
	require.Len(t, refused, 1, "%v", logs.All())
	assert.Contains(t, refused[0].Message, ": 401 wrong or no credentials")
	require.Eventually(t, func() bool {
		return len(logs.FilterMessageSnippet("TLS handshake error from 127.0.0.1:").FilterMessageSnippet("didn't provide a certificate").All()) == 1
	}, 5*time.Second, 10*time.Millisecond, "the handshake errors: %v", logs.All())
}

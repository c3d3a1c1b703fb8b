// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package tlsreload // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// ClientTLS is cfg.LoadTLSConfig (nil when cfg is insecure without a CA)
// with the client certificate, when there is one, kept by a keeper, and
// when there is none, a server that asks for one logged.
func ClientTLS(ctx context.Context, cfg configtls.ClientConfig, logger *zap.Logger) (*tls.Config, error) {
	c, err := cfg.LoadTLSConfig(ctx)
	if err != nil || c == nil {
		return c, err
	}
	if c.GetClientCertificate == nil {
		c.GetClientCertificate = (&noCertificate{logger: logger, now: time.Now}).get
		return c, nil
	}
	load := c.GetClientCertificate
	k, err := startKeeper(func() (*tls.Certificate, error) { return load(nil) }, logger, "client", cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return k.get() }
	return c, nil
}

// noCertificate answers a server's request for a client certificate when
// none is configured, with none, as crypto/tls does; and says so: with TLS
// 1.3 the server refuses only after the handshake, and the client sees a
// broken connection ("broken pipe", "http2: client conn could not be
// established") rather than why.
type noCertificate struct {
	logger *zap.Logger
	now    func() time.Time

	mu     sync.Mutex
	logged time.Time
}

func (n *noCertificate) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if now := n.now(); now.Sub(n.logged) >= Every {
		n.logged = now
		n.logger.Warn("The server asks for a TLS client certificate and none is configured (tls::cert_file, tls::key_file): a server that requires one refuses the connection")
	}
	return &tls.Certificate{}, nil
}

// HTTPClient is cc.ToClient with the client certificate kept by a keeper.
func HTTPClient(ctx context.Context, cc confighttp.ClientConfig, host component.Host, set component.TelemetrySettings) (*http.Client, error) {
	tlsCfg, err := ClientTLS(ctx, cc.TLS, set.Logger)
	if err != nil {
		return nil, err
	}
	exts := host.GetExtensions()
	if tlsCfg != nil {
		// confighttp makes the transport and its tls.Config itself; the one
		// hook it offers on the transport is a client middleware, the
		// innermost of which gets the *http.Transport.
		exts = maps.Clone(exts)
		if exts == nil {
			exts = map[component.ID]component.Component{}
		}
		exts[transportID] = transportTLS{tls: tlsCfg}
		cc.Middlewares = append(slices.Clone(cc.Middlewares), configmiddleware.Config{ID: transportID})
	}
	return cc.ToClient(ctx, exts, set)
}

// transportID names transportTLS among the extensions given to ToClient
// only; no configuration can name it (it is no factory's type).
var transportID = component.MustNewIDWithName("tlsreload", "client_certificate")

// transportTLS puts its tls.Config into the transport confighttp made.
type transportTLS struct {
	component.StartFunc
	component.ShutdownFunc
	tls *tls.Config
}

var _ extensionmiddleware.HTTPClient = transportTLS{}

func (m transportTLS) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, base http.RoundTripper) (http.RoundTripper, error) {
		t, ok := base.(*http.Transport)
		if !ok {
			return nil, fmt.Errorf("tlsreload: the innermost round tripper is a %T, not the *http.Transport confighttp makes", base)
		}
		c := m.tls
		if t.TLSClientConfig != nil && len(t.TLSClientConfig.NextProtos) > 0 {
			// http2 configured on the transport (http2_read_idle_timeout) added h2.
			c = c.Clone()
			c.NextProtos = t.TLSClientConfig.NextProtos
		}
		t.TLSClientConfig = c
		return t, nil
	}, nil
}

// GRPCDialOption is the transport credentials of ClientTLS(cfg); nil
// without TLS (insecure), where configgrpc's own are the same.
func GRPCDialOption(ctx context.Context, cfg configtls.ClientConfig, logger *zap.Logger) (grpc.DialOption, error) {
	tlsCfg, err := ClientTLS(ctx, cfg, logger)
	if err != nil || tlsCfg == nil {
		return nil, err
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)), nil
}

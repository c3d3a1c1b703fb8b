// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package tlsreload // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"

import (
	"context"
	"crypto/tls"
	"log"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.uber.org/zap"
)

// ServerTLS is cfg.LoadTLSConfig with the server certificate kept by a keeper.
func ServerTLS(ctx context.Context, cfg configtls.ServerConfig, logger *zap.Logger) (*tls.Config, error) {
	c, err := cfg.LoadTLSConfig(ctx)
	if err != nil || c.GetCertificate == nil {
		return c, err
	}
	load := c.GetCertificate
	k, err := startKeeper(func() (*tls.Certificate, error) { return load(nil) }, logger, "server", cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	// configtls's client CA reloader copies GetCertificate from c at each handshake.
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return k.get() }
	return c, nil
}

// Listener is sc.ToListener with the server certificate kept by a keeper.
func Listener(ctx context.Context, sc confighttp.ServerConfig, logger *zap.Logger) (net.Listener, error) {
	if !sc.TLS.HasValue() {
		return sc.ToListener(ctx)
	}
	tlsCfg, err := ServerTLS(ctx, *sc.TLS.Get(), logger)
	if err != nil {
		return nil, err
	}
	sc.TLS = configoptional.None[configtls.ServerConfig]()
	ln, err := sc.ToListener(ctx)
	if err != nil {
		return nil, err
	}
	tlsCfg.NextProtos = []string{"h2", "http/1.1"} // as confighttp's
	return tls.NewListener(ln, tlsCfg), nil
}

// ErrorLog is an http.Server's ErrorLog that logs each kind of line at most
// once per Every, at warning level, with how many like it came since: a
// scraper without the right certificate fails its handshake at every
// scrape, and net/http logs each ("http: TLS handshake error from ...").
func ErrorLog(logger *zap.Logger, what string) *log.Logger {
	return log.New(&sampledWriter{logger: logger, what: what, now: time.Now, last: map[string]sampled{}}, "", 0)
}

// maxKinds bounds the kinds remembered; older than Every ones go first.
const maxKinds = 256

type sampled struct {
	at         time.Time
	suppressed int
}

type sampledWriter struct {
	logger *zap.Logger
	what   string
	now    func() time.Time

	mu   sync.Mutex
	last map[string]sampled // by kind
}

// peerPort is the client's port in a net/http line, and timeStamp a time in
// crypto/x509's errors ("current time ... is after ..."): each connection
// has others, so lines differing only there are of one kind.
var (
	peerPort  = regexp.MustCompile(`(\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:.%\w]+\]):\d+`)
	timeStamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

func (w *sampledWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	kind := timeStamp.ReplaceAllString(peerPort.ReplaceAllString(line, "$1"), "T")
	now := w.now()
	w.mu.Lock()
	s, ok := w.last[kind]
	if ok && now.Sub(s.at) < Every {
		s.suppressed++
		w.last[kind] = s
		w.mu.Unlock()
		return len(p), nil
	}
	if len(w.last) >= maxKinds {
		for k, old := range w.last {
			if now.Sub(old.at) >= Every {
				delete(w.last, k)
			}
		}
	}
	w.last[kind] = sampled{at: now}
	w.mu.Unlock()
	w.logger.Warn(w.what+": "+line, zap.Int("like_it_since_last_logged", s.suppressed))
	return len(p), nil
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package tlsreload // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Every is how often one problem of a certificate is logged at most.
const Every = time.Minute

// keeper hands out the certificate that configtls re-reads from cert_file
// and key_file every reload_interval, and the last one that loaded when a
// reload fails: configtls itself then fails every handshake, so a file
// replaced by garbage, or a certificate written before its key, would cut
// the connection off although the certificate in memory is still good.
type keeper struct {
	load   func() (*tls.Certificate, error) // configtls's getter
	logger *zap.Logger
	role   string // "client" or "server", for the log lines
	files  []zap.Field
	now    func() time.Time

	mu      sync.Mutex
	good    *tls.Certificate
	failing bool
	logged  map[string]time.Time // by problem
}

func newKeeper(load func() (*tls.Certificate, error), logger *zap.Logger, role, certFile, keyFile string) *keeper {
	return &keeper{
		load:   load,
		logger: logger,
		role:   role,
		files:  []zap.Field{zap.String("cert_file", certFile), zap.String("key_file", keyFile)},
		now:    time.Now,
		logged: map[string]time.Time{},
	}
}

// startKeeper is a keeper over load, with its first load done: a
// certificate that does not load at start is the start's error.
func startKeeper(load func() (*tls.Certificate, error), logger *zap.Logger, role, certFile, keyFile string) (*keeper, error) {
	k := newKeeper(load, logger, role, certFile, keyFile)
	if _, err := k.get(); err != nil {
		return nil, err
	}
	return k, nil
}

// get is the tls.Config's certificate getter.
func (k *keeper) get() (*tls.Certificate, error) {
	c, err := k.load()
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if err != nil {
		if k.good == nil {
			return nil, err
		}
		k.failing = true
		if k.due("load", now) {
			k.logger.Error("The TLS "+k.role+" certificate files do not load; the certificate loaded before stays in use until they do",
				append(k.fields(k.good), zap.Error(err))...)
		}
		return k.good, nil
	}
	if c != k.good { // configtls returns the same pointer until it reloads, every reload_interval
		if k.good != nil && (k.failing || !sameCertificate(c, k.good)) {
			k.logger.Info("Loaded the TLS "+k.role+" certificate from its files", k.fields(c)...)
			delete(k.logged, "expired")
		}
		k.good, k.failing = c, false
	}
	if leaf := k.leaf(c); leaf != nil && now.After(leaf.NotAfter) && k.due("expired", now) {
		// Peers refuse it; say so here, where the cause is, not only as their "bad certificate".
		k.logger.Error("The TLS "+k.role+" certificate in use has expired: peers that verify it refuse the connection; replace cert_file and key_file",
			k.fields(c)...)
	}
	return c, nil
}

func sameCertificate(a, b *tls.Certificate) bool {
	return len(a.Certificate) > 0 && len(b.Certificate) > 0 && bytes.Equal(a.Certificate[0], b.Certificate[0])
}

// due reports whether problem may be logged now; k.mu is held.
func (k *keeper) due(problem string, now time.Time) bool {
	if t, ok := k.logged[problem]; ok && now.Sub(t) < Every {
		return false
	}
	k.logged[problem] = now
	return true
}

func (*keeper) leaf(c *tls.Certificate) *x509.Certificate {
	if c.Leaf != nil {
		return c.Leaf
	}
	if len(c.Certificate) == 0 {
		return nil
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return nil
	}
	return leaf
}

// fields name the files and the certificate c.
func (k *keeper) fields(c *tls.Certificate) []zap.Field {
	out := append([]zap.Field(nil), k.files...)
	if leaf := k.leaf(c); leaf != nil {
		out = append(out, zap.String("subject", leaf.Subject.String()), zap.Time("not_after", leaf.NotAfter))
	}
	return out
}

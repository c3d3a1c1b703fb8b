// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package testcert makes the certificate authorities and certificates of
// the tests, in memory, at run time (crypto/x509): no key is ever committed.
package testcert // import "github.com/rocm-ernic/otelcol-ernic/internal/testcert"

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is its certificate.
	PEM []byte
}

// Pair is a certificate and its key, PEM-encoded.
type Pair struct {
	Cert *x509.Certificate
	// CertPEM and KeyPEM are what cert_file and key_file hold.
	CertPEM, KeyPEM []byte
}

// NewCA makes a certificate authority named name, valid from an hour ago for a day.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost,
// valid from an hour ago for a day.
func (ca *CA) Server(t testing.TB, name string) Pair {
	t.Helper()
	return ca.Issue(t, name, x509.ExtKeyUsageServerAuth, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}

// Client issues a client certificate, valid from an hour ago for a day.
func (ca *CA) Client(t testing.TB, name string) Pair {
	t.Helper()
	return ca.Issue(t, name, x509.ExtKeyUsageClientAuth, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}

// Issue issues a certificate for usage valid from notBefore to notAfter
// (in the past for an expired one).
func (ca *CA) Issue(t testing.TB, name string, usage x509.ExtKeyUsage, notBefore, notAfter time.Time) Pair {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Pair{
		Cert:    cert,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

// TLS is p as a tls.Certificate.
func (p Pair) TLS(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Write writes the certificate to certFile and the key to keyFile (mode
// 0600), each through a temporary file renamed over it, as a rotation
// should: a reader never sees half a file.
func (p Pair) Write(t testing.TB, certFile, keyFile string) {
	t.Helper()
	WriteFile(t, keyFile, p.KeyPEM)
	WriteFile(t, certFile, p.CertPEM)
}

// WriteFile replaces name with data (mode 0600) through a rename.
func WriteFile(t testing.TB, name string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

// Pool is a certificate pool of the CAs.
func Pool(cas ...*CA) *x509.CertPool {
	p := x509.NewCertPool()
	for _, ca := range cas {
		p.AddCert(ca.Cert)
	}
	return p
}

// Bundle is the CAs' certificates in one PEM file's text.
func Bundle(cas ...*CA) []byte {
	var out []byte
	for _, ca := range cas {
		out = append(out, ca.PEM...)
	}
	return out
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

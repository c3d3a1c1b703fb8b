// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package tlsreload gives the exporters' clients and the pull endpoint's
// server configtls's TLS, with the certificate re-read every
// reload_interval as configtls does, but the last one that loaded kept in
// use, and said so, while cert_file and key_file do not load (configtls
// alone fails every handshake then); and a certificate in use that has
// expired logged where it is, not only as the peer's "bad certificate".
package tlsreload // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

func FuzzEncodingUnmarshal(f *testing.F) {
	r := newRequest([][]byte{[]byte("abc"), {}, []byte("defgh")}, []int{3, 0, 7})
	b, _ := encoding{}.Marshal(r)
	f.Add(b)
	f.Add([]byte{2, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := encoding{}.Unmarshal(b)
		if err != nil {
			return
		}
		r := req
		if len(r.payloads) != len(r.samples) {
			t.Fatal("mismatch")
		}
		b2, err := encoding{}.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		req2, err := encoding{}.Unmarshal(b2)
		if err != nil {
			t.Fatal(err)
		}
		r2 := req2
		if r2.id != r.id || r2.bytes != r.bytes || r2.ItemsCount() != r.ItemsCount() || len(r2.payloads) != len(r.payloads) {
			t.Fatal("not a round trip")
		}
	})
}

// The stored form (encoding version 3) carries the protocol; version 2,
// without the protocol byte, still reads back, as 1.0.
func TestEncodingCarriesProtocol(t *testing.T) {
	r := newRequest([][]byte{[]byte("abc")}, []int{3})
	r.proto = translator.ProtocolV2
	b, err := encoding{}.Marshal(r)
	require.NoError(t, err)
	assert.Equal(t, []byte{3, 2}, b[:2])
	got, err := encoding{}.Unmarshal(b)
	require.NoError(t, err)
	assert.Equal(t, translator.ProtocolV2, got.proto)

	version2 := append([]byte{encodingV1Only}, b[2:]...)
	got, err = encoding{}.Unmarshal(version2)
	require.NoError(t, err)
	assert.Equal(t, translator.ProtocolV1, got.proto)
	assert.Equal(t, [][]byte{[]byte("abc")}, got.payloads)
	assert.Equal(t, r.id, got.id)

	_, err = encoding{}.Unmarshal(append([]byte{3, 9}, b[2:]...))
	assert.ErrorContains(t, err, "unknown version", "an unknown protocol")
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package translator

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDowngradeV2ToV1(t *testing.T) {
	md := withStartAndHelp(receiverLike(5), time.Unix(1_699_999_000, 0))
	cfg := DefaultSettings()
	v1, _ := New(cfg).Translate(md)
	cfg.Protocol = ProtocolV2
	v2, _ := New(cfg).Translate(md)
	require.Len(t, v2.Payloads, 1)
	p, err := Downgrade(v2.Payloads[0])
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(decoded(t, v1.Payloads)), fmt.Sprint(decoded(t, [][]byte{p})))
	_, err = Downgrade([]byte("not snappy"))
	assert.Error(t, err)
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The attributes of a series come back from their encoding as they were:
// strings with any bytes, and the other value types.
func TestStaleAttrsRoundTrip(t *testing.T) {
	in := pcommon.NewMap()
	in.PutStr("ernic.id", "3")
	in.PutStr("vm.name", "a\x00b\xff\u00e9")
	in.PutStr("", "")
	in.PutInt("n", -42)
	in.PutDouble("d", 0.1)
	in.PutBool("b", true)
	out := pcommon.NewMap()
	decodeAttrs(string(encodeAttrs(nil, in)), out)
	assert.Equal(t, in.AsRaw(), out.AsRaw())
	assert.Equal(t, pcommon.ValueTypeInt, mustGet(t, out, "n").Type())
	assert.Equal(t, pcommon.ValueTypeDouble, mustGet(t, out, "d").Type())
	assert.Equal(t, pcommon.ValueTypeBool, mustGet(t, out, "b").Type())
}

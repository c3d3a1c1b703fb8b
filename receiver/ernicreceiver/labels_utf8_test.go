// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// validLabel is what the receiver publishes for a value with invalid
// UTF-8: the bad bytes as U+FFFD, then "~" and the FNV-1a hash of the raw
// value, so that two values that differ only in bad bytes stay two series.
func validLabel(raw string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(raw))
	return fmt.Sprintf("%s~%08x", strings.ToValidUTF8(raw, "\uFFFD"), h.Sum32())
}

// A connection state, LIF counter or opcode name with invalid UTF-8 is
// published valid (the Prometheus endpoint dropped such series, remote
// write stored the raw bytes), counted in ernic.labels.truncated and
// reported once.
func TestInvalidUTF8Labels(t *testing.T) {
	f := newFixture(t, "basic")
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	state, lifA, lifB, op := "connected \xff", "rx_\xffbytes", "rx_\xfebytes", "SE\xc3ND"
	text := replaceLine(t, string(whole), "connection  : connected (PCI FLR)", "connection  : "+state)
	text = replaceLine(t, text, "rx_ucast_bytes : 498230", lifA+" : 5")
	text = replaceLine(t, text, "tx_ucast_bytes : 512044", lifB+" : 7")
	text = replaceLine(t, text, "      SEND                  : 512\n", "      "+op+"                  : 512\n")
	f.write(t, "2.stats", text, scrapeNow)
	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) { c.Metrics.ErnicQpWqesByOpcode.Enabled = true }), &now)
	md, err := s.scrape(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "instance 2: 4 attribute values with invalid UTF-8")

	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		for k, v := range dp.Attributes().All() {
			assert.True(t, utf8.ValidString(v.AsString()), "%s %s=%q", m.Name(), k, v.AsString())
		}
	})
	assert.Equal(t, int64(1), intVal(t, md, "ernic.connection.up", "ernic.id", "2", "state", validLabel(state)))
	assert.Equal(t, int64(5), intVal(t, md, "ernic.lif.counter", "ernic.id", "2", "counter", validLabel(lifA)))
	assert.Equal(t, int64(7), intVal(t, md, "ernic.lif.counter", "ernic.id", "2", "counter", validLabel(lifB)))
	assert.Equal(t, int64(512), intVal(t, md, "ernic.qp.wqes.by_opcode", "ernic.id", "2", "qp", "9", "opcode", validLabel(op)))
	// The fixture's rx_rdma_future_counter is not cut at the default 128.
	assert.Equal(t, int64(4), intVal(t, md, "ernic.labels.truncated", "ernic.id", "2"))

	// Reported once; still counted every scrape.
	now = now.Add(5 * 1e9)
	md, err = s.scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(4), intVal(t, md, "ernic.labels.truncated", "ernic.id", "2"))
}

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
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// cutLabel is a value as max_label_length max leaves it: its first bytes
// (at a UTF-8 boundary) and "~" with 8 hex digits of its FNV-1a hash.
func cutLabel(v string, max int, keep int) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(v))
	out := fmt.Sprintf("%s~%08x", v[:keep], h.Sum32())
	if len(out) > max {
		panic("cutLabel: keep too long")
	}
	return out
}

// An attribute value from the run directory longer than max_label_length is
// cut, at a UTF-8 boundary, with a hash of the whole value, and counted.
func TestScrapeLabelCap(t *testing.T) {
	f := newFixture(t, "basic")
	long := strings.Repeat("r", 11) + "é" + strings.Repeat("x", 10)
	f.write(t, "instances.json", `{"instances":[{"id":2,"role":"`+long+`","pid":4117,"mac":"m","vm":{"attached":true,"vm_name":"`+strings.Repeat("v", 40)+`"}}]}`, scrapeNow)
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	f.write(t, "2.stats", replaceLine(t, string(whole), "rx_ucast_bytes : 498230", strings.Repeat("c", 30)+" : 498230"), scrapeNow)
	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) { c.MaxLabelLength = 21 }), &now)
	md := scrapeOK(t, s)
	role := cutLabel(long, 21, 11) // the 2-byte é would pass 12 bytes
	// role, vm_name, the long LIF name, and the fixture's own
	// rx_rdma_future_counter (22 bytes).
	assert.Equal(t, int64(4), intVal(t, md, "ernic.labels.truncated", "ernic.id", "2", "role", role))
	assert.Equal(t, int64(7), intVal(t, md, "ernic.lif.counter", "counter", cutLabel("rx_rdma_future_counter", 21, 12)))
	assert.Equal(t, int64(1), intVal(t, md, "ernic.vm.attached", "ernic.id", "2", "vm.name", cutLabel(strings.Repeat("v", 40), 21, 12)))
	assert.Equal(t, int64(498230), intVal(t, md, "ernic.lif.counter", "counter", cutLabel(strings.Repeat("c", 30), 21, 12)))

	// The last good manifest, reused while the file is torn, counts its
	// cut values again (they were once cut in place on it).
	f.write(t, "instances.json", `{"instances":[`, scrapeNow.Add(time.Second))
	now = now.Add(5 * time.Second)
	md, err = s.scrape(context.Background())
	require.Error(t, err)
	assert.Equal(t, int64(4), intVal(t, md, "ernic.labels.truncated", "ernic.id", "2", "role", role))
}

// Two names that share their first max_label_length bytes stay two series,
// each with its own value: never one, summed or overwritten.
func TestScrapeLabelCapKeepsDistinct(t *testing.T) {
	f := newFixture(t, "basic")
	whole, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	a, b := strings.Repeat("q", 40)+"_a", strings.Repeat("q", 40)+"_b"
	text := replaceLine(t, string(whole), "rx_ucast_bytes : 498230", a+" : 5")
	text = replaceLine(t, text, "tx_ucast_bytes : 512044", b+" : 7")
	f.write(t, "2.stats", text, scrapeNow)
	now := scrapeNow
	md := scrapeOK(t, newTestScraper(t, f.config(func(c *Config) { c.MaxLabelLength = 21 }), &now))
	assert.Equal(t, int64(5), intVal(t, md, "ernic.lif.counter", "ernic.id", "2", "counter", cutLabel(a, 21, 12)))
	assert.Equal(t, int64(7), intVal(t, md, "ernic.lif.counter", "ernic.id", "2", "counter", cutLabel(b, 21, 12)))
}

// With an attribute turned off (the generated `attributes` setting), the
// builder folds the points that become alike; the scrape is then recorded
// in one piece, so that they fold across what would be separate pieces (16
// LIF counters, 16 QPs).
func TestReaggregationAcrossPieces(t *testing.T) {
	f := newFixture(t, "basic")
	stats, err := os.ReadFile(filepath.Join(f.runDir, "2.stats"))
	require.NoError(t, err)
	// 40 more LIF counters: 47 in all, three pieces of 16.
	var extra strings.Builder
	wantLIF := int64(0)
	for i := range 40 {
		fmt.Fprintf(&extra, "  rx_extra_%02d : %d\n", i, i+1)
		wantLIF += int64(i + 1)
	}
	content := strings.Replace(string(stats), "  rx_rdma_future_counter : 7\n", "  rx_rdma_future_counter : 7\n"+extra.String(), 1)
	// 20 more QPs: 22 in all, two pieces of 16.
	var qps strings.Builder
	for i := range 20 {
		fmt.Fprintf(&qps, "  QP %d:\n    bytes_sent     : %d\n\n", 100+i, 1000*(i+1))
	}
	content = strings.Replace(content, "LIF Statistics:\n", qps.String()+"LIF Statistics:\n", 1)
	f.write(t, "2.stats", content, scrapeNow.Add(-500*time.Millisecond))
	parsed, err := rundir.ParseStats([]byte(content))
	require.NoError(t, err)
	for _, c := range parsed.LIF[:7] {
		wantLIF += int64(c.Value)
	}
	require.Len(t, parsed.LIF, 47)
	require.Len(t, parsed.QPs, 22)

	now := scrapeNow
	s := newTestScraper(t, f.config(func(c *Config) {
		c.Metrics.ErnicLifCounter.EnabledAttributes = []metadata.ErnicLifCounterMetricAttributeKey{}
		c.Metrics.ErnicQpBytesSent.EnabledAttributes = []metadata.ErnicQpBytesSentMetricAttributeKey{}
	}), &now)
	assert.Nil(t, s.bulk, "a metric with an attribute off is recorded by the builder")
	md := scrapeOK(t, s)
	lif := map[string][]int64{}
	sent := map[string][]int64{}
	forEachResourcePoint(md, func(res pcommon.Map, m pmetric.Metric, dp pmetric.NumberDataPoint) {
		id, _ := res.Get("ernic.id")
		switch m.Name() {
		case "ernic.lif.counter":
			lif[id.Str()] = append(lif[id.Str()], dp.IntValue())
		case "ernic.qp.bytes.sent":
			sent[id.Str()] = append(sent[id.Str()], dp.IntValue())
		}
	})
	assert.Equal(t, []int64{wantLIF}, lif["2"], "one point: the sum of the 47 LIF counters")
	wantSent := int64(0)
	for i := range parsed.QPs {
		v, _ := parsed.QPs[i].Get(rundir.QPBytesSent)
		wantSent += int64(v)
	}
	assert.Equal(t, []int64{wantSent}, sent["2"], "one point: the sum over the QPs")

	// The default configuration records the bulk metrics past the builder.
	assert.NotNil(t, newTestScraper(t, f.config(), &now).bulk)
}

// With host.name on (as the push configs have it), every resource carries
// the host: the instances' and the cluster gauges'; host_name overrides
// the kernel's host name.
func TestHostNameOnEveryResource(t *testing.T) {
	kernel, err := os.Hostname()
	require.NoError(t, err)
	for _, tc := range []struct{ setting, want string }{{"", kernel}, {"gpu-17", "gpu-17"}} {
		f := newFixture(t, "basic")
		now := scrapeNow
		s := newTestScraper(t, f.config(func(c *Config) {
			c.ResourceAttributes.HostName.Enabled = true
			c.HostName = tc.setting
		}), &now)
		md := scrapeOK(t, s)
		rms := md.ResourceMetrics()
		require.Equal(t, 4, rms.Len(), "three instances and the cluster gauges")
		for i := range rms.Len() {
			v, ok := rms.At(i).Resource().Attributes().Get("host.name")
			require.True(t, ok, "resource %v", rms.At(i).Resource().Attributes().AsRaw())
			assert.Equal(t, tc.want, v.Str())
		}
	}
	// Off by default: the legacy labels.
	f := newFixture(t, "basic")
	now := scrapeNow
	md := scrapeOK(t, newTestScraper(t, f.config(), &now))
	for i := range md.ResourceMetrics().Len() {
		_, ok := md.ResourceMetrics().At(i).Resource().Attributes().Get("host.name")
		assert.False(t, ok)
	}
}

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

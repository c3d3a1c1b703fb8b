// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// deviceCounters maps the device counters to their metrics; of several keys,
// the first the file printed is used (current server's name first).
var deviceCounters = []struct {
	keys   []rundir.DeviceKey
	record func(mb *metadata.MetricsBuilder, ts pcommon.Timestamp, v int64)
}{
	{[]rundir.DeviceKey{rundir.Commands}, (*metadata.MetricsBuilder).RecordErnicCommandsDataPoint},
	{[]rundir.DeviceKey{rundir.Interrupts}, (*metadata.MetricsBuilder).RecordErnicInterruptsDataPoint},
	{[]rundir.DeviceKey{rundir.ResetCount, rundir.FLRResetCount}, (*metadata.MetricsBuilder).RecordErnicFlrResetDataPoint},
	{[]rundir.DeviceKey{rundir.MMIOReads, rundir.RegsReads}, (*metadata.MetricsBuilder).RecordErnicMmioReadsDataPoint},
	{[]rundir.DeviceKey{rundir.MMIOWrites, rundir.RegsWrites}, (*metadata.MetricsBuilder).RecordErnicMmioWritesDataPoint},
	{[]rundir.DeviceKey{rundir.BytesSent}, (*metadata.MetricsBuilder).RecordErnicRdmaBytesSentDataPoint},
	{[]rundir.DeviceKey{rundir.BytesReceived}, (*metadata.MetricsBuilder).RecordErnicRdmaBytesReceivedDataPoint},
	{[]rundir.DeviceKey{rundir.BytesRDMARead}, (*metadata.MetricsBuilder).RecordErnicRdmaBytesReadDataPoint},
	{[]rundir.DeviceKey{rundir.BytesRDMAWrite}, (*metadata.MetricsBuilder).RecordErnicRdmaBytesWriteDataPoint},
	{[]rundir.DeviceKey{rundir.IPBytesTx}, (*metadata.MetricsBuilder).RecordErnicIPBytesTxDataPoint},
	{[]rundir.DeviceKey{rundir.IPBytesRx}, (*metadata.MetricsBuilder).RecordErnicIPBytesRxDataPoint},
}

var qpCounters = []struct {
	key    rundir.QPKey
	name   string
	record func(mb *metadata.MetricsBuilder, ts pcommon.Timestamp, v int64, qp string)
}{
	{rundir.QPBytesSent, metadata.MetricsInfo.ErnicQpBytesSent.Name, (*metadata.MetricsBuilder).RecordErnicQpBytesSentDataPoint},
	{rundir.QPBytesReceived, metadata.MetricsInfo.ErnicQpBytesReceived.Name, (*metadata.MetricsBuilder).RecordErnicQpBytesReceivedDataPoint},
	{rundir.QPBytesRDMARead, metadata.MetricsInfo.ErnicQpBytesRdmaRead.Name, (*metadata.MetricsBuilder).RecordErnicQpBytesRdmaReadDataPoint},
	{rundir.QPBytesRDMAWrite, metadata.MetricsInfo.ErnicQpBytesRdmaWrite.Name, (*metadata.MetricsBuilder).RecordErnicQpBytesRdmaWriteDataPoint},
	{rundir.QPWQEsProcessed, metadata.MetricsInfo.ErnicQpWqesProcessed.Name, (*metadata.MetricsBuilder).RecordErnicQpWqesProcessedDataPoint},
	{rundir.QPCQEsPosted, metadata.MetricsInfo.ErnicQpCqesPosted.Name, (*metadata.MetricsBuilder).RecordErnicQpCqesPostedDataPoint},
	{rundir.QPDoorbellSend, metadata.MetricsInfo.ErnicQpDoorbellSend.Name, (*metadata.MetricsBuilder).RecordErnicQpDoorbellSendDataPoint},
	{rundir.QPDoorbellRecv, metadata.MetricsInfo.ErnicQpDoorbellRecv.Name, (*metadata.MetricsBuilder).RecordErnicQpDoorbellRecvDataPoint},
}

// bulkShapes returns an empty copy of each bulk metric, as the builder makes it.
func bulkShapes(set receiver.Settings) map[string]pmetric.Metric {
	cfg := metadata.NewDefaultMetricsBuilderConfig()
	cfg.Metrics.ErnicQpWqesByOpcode.Enabled = true
	cfg.Metrics.ErnicLifCounter.Enabled = true
	for _, c := range qpCounters {
		*enabledFlag(&cfg.Metrics, c.name) = true
	}
	mb := metadata.NewMetricsBuilder(cfg, set)
	for _, c := range qpCounters {
		c.record(mb, 0, 0, "")
	}
	mb.RecordErnicLifCounterDataPoint(0, 0, "")
	mb.RecordErnicQpWqesByOpcodeDataPoint(0, 0, "", "")
	shapes := map[string]pmetric.Metric{}
	forEachMetric(mb.Emit(), func(m pmetric.Metric) {
		shapes[m.Name()] = metricShape(m)
	})
	return shapes
}

// statsRecorder records the metrics of an instance's stats file.
type statsRecorder struct {
	mb *metadata.MetricsBuilder
	// bulk: see ernicScraper.bulk.
	bulk *bulkPoints
	// qpOn is in the order of qpCounters.
	qpOn            []bool
	lifOn, opcodeOn bool
	// maxQPs is max_qps_per_instance.
	maxQPs int
	logger *zap.Logger
}

func newStatsRecorder(cfg *Config, mb *metadata.MetricsBuilder, bulk *bulkPoints, logger *zap.Logger) *statsRecorder {
	r := &statsRecorder{
		mb:       mb,
		bulk:     bulk,
		lifOn:    cfg.Metrics.ErnicLifCounter.Enabled,
		opcodeOn: cfg.Metrics.ErnicQpWqesByOpcode.Enabled,
		maxQPs:   cfg.MaxQPsPerInstance,
		logger:   logger,
	}
	for _, c := range qpCounters {
		r.qpOn = append(r.qpOn, *enabledFlag(&cfg.Metrics, c.name))
	}
	return r
}

// record records the snapshot's metrics under the instance's start time.
func (r *statsRecorder) record(st *instanceState, id string, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) {
	r.recordFile(st, id, now, ts, errs)
	r.recordDevice(st, id, ts)
	qps := publishedQPs(st.stats.QPs, r.maxQPs)
	r.mb.RecordErnicQpUnpublishedDataPoint(ts, int64(len(st.stats.QPs)-len(qps)))
	if r.bulk != nil {
		r.recordBulk(st, qps, id, ts, errs)
		return
	}
	r.recordLIF(st, id, ts)
	r.recordQPs(st, qps, id, ts, errs)
}

// counter converts a file value to an int64; one above 2^63-1 is logged once
// per process, and only then is name called.
func (r *statsRecorder) counter(st *instanceState, id string, v uint64, name func() string) (int64, bool) {
	if v <= math.MaxInt64 {
		return int64(v), true
	}
	r.logOverflow(st, id, name(), v)
	return 0, false
}

// recordFile records the connection state, QP count, file age and writes.
func (r *statsRecorder) recordFile(st *instanceState, id string, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) {
	stats := st.stats
	state := "unknown"
	if stats.HasConnection {
		state = stats.Connection
	}
	connected := int64(0)
	if strings.HasPrefix(state, "connected") {
		connected = 1
	}
	r.mb.RecordErnicConnectionUpDataPoint(ts, connected, state)
	r.mb.RecordErnicQpCountDataPoint(ts, int64(len(stats.QPs)))
	// A file from the future is published 0 s old and reported: a negative age
	// would keep ErnicStatsStuck silent. A second of skew is no fault.
	age := now.Sub(st.statsTime).Seconds()
	if age < -1 {
		errs.add("stats-mtime-future:"+id, 1, fmt.Errorf("instance %s: stats file modified %s, %.0f s in the future; its age is published as 0", id, st.statsTime.Format(time.RFC3339), -age))
	}
	age = max(age, 0)
	r.mb.RecordErnicStatsAgeDataPoint(ts, age)
	if stats.HasWriteCount {
		if v, ok := r.counter(st, id, stats.WriteCount, func() string { return "Write count" }); ok {
			r.mb.RecordErnicStatsWritesDataPoint(ts, v)
		}
	}
}

func (r *statsRecorder) recordDevice(st *instanceState, id string, ts pcommon.Timestamp) {
	dev := &st.stats.Device
	for _, c := range deviceCounters {
		for _, k := range c.keys {
			if raw, ok := dev.Get(k); ok {
				if v, ok := r.counter(st, id, raw, k.String); ok {
					c.record(r.mb, ts, v)
				}
				break
			}
		}
	}
	if total, ok := sumDevice(dev, rundir.BytesSent, rundir.BytesReceived, rundir.BytesRDMARead, rundir.BytesRDMAWrite); ok {
		if v, ok := r.counter(st, id, total, func() string { return "total_bytes_sent+received+rdma_read+rdma_write" }); ok {
			r.mb.RecordErnicRdmaBytesDataPoint(ts, v)
		}
	}
	if total, ok := sumDevice(dev, rundir.IPBytesTx, rundir.IPBytesRx); ok {
		if v, ok := r.counter(st, id, total, func() string { return "total_ip_bytes_tx+rx" }); ok {
			r.mb.RecordErnicIPBytesDataPoint(ts, v)
		}
	}
}

// recordLIF records the LIF counters through the builder.
func (r *statsRecorder) recordLIF(st *instanceState, id string, ts pcommon.Timestamp) {
	for _, c := range st.stats.LIF {
		if v, ok := r.counter(st, id, c.Value, func() string { return c.Name }); ok {
			r.mb.RecordErnicLifCounterDataPoint(ts, v, c.Name)
		}
	}
}

// recordQPs records the per-QP and opcode points through the builder.
func (r *statsRecorder) recordQPs(st *instanceState, qps []*rundir.QP, id string, ts pcommon.Timestamp, errs *scrapeErrors) {
	for _, q := range qps {
		handle := strconv.FormatUint(uint64(q.Handle), 10)
		for _, c := range qpCounters {
			if raw, ok := q.Get(c.key); ok {
				if v, ok := r.counter(st, id, raw, func() string { return "QP " + handle + " " + c.key.String() }); ok {
					c.record(r.mb, ts, v, handle)
				}
			}
		}
		if !r.opcodeOn {
			continue
		}
		for _, op := range q.Opcodes {
			if r.otherClash(q, op.Name, id, handle, errs) {
				continue
			}
			if v, ok := r.counter(st, id, op.Value, func() string { return "QP " + handle + " opcode " + op.Name }); ok {
				r.mb.RecordErnicQpWqesByOpcodeDataPoint(ts, v, handle, op.Name)
			}
		}
		// A wrapped `(other opcodes)` is the server's unsigned subtraction going
		// below zero: dropped without a log line.
		if q.HasOther && q.Other <= math.MaxInt64 {
			r.mb.RecordErnicQpWqesByOpcodeDataPoint(ts, int64(st.holdOther(q.Handle, q.Other)), handle, "other")
		}
	}
}

// recordBulk records through r.bulk the same points as recordLIF and
// recordQPs, in the same order within each metric.
func (r *statsRecorder) recordBulk(st *instanceState, qps []*rundir.QP, id string, ts pcommon.Timestamp, errs *scrapeErrors) {
	var dps pmetric.NumberDataPointSlice
	// points adds the metric at its first point, so one without points is not
	// published; n is the first capacity.
	points := func(name string, n int) pmetric.NumberDataPointSlice {
		if dps == (pmetric.NumberDataPointSlice{}) {
			dps = r.bulk.slice(name, n)
		}
		return dps
	}
	if r.lifOn {
		name := metadata.MetricsInfo.ErnicLifCounter.Name
		for _, c := range st.stats.LIF {
			if c.Value > math.MaxInt64 {
				r.logOverflow(st, id, c.Name, c.Value)
				continue
			}
			r.bulk.add(points(name, len(st.stats.LIF)), st.start, ts, int64(c.Value), "counter", c.Name, 0)
		}
	}
	handles := st.qpHandles(qps)
	for k, c := range qpCounters {
		if !r.qpOn[k] {
			continue
		}
		dps = pmetric.NumberDataPointSlice{}
		for i, q := range qps {
			raw, ok := q.Get(c.key)
			if !ok {
				continue
			}
			if raw > math.MaxInt64 {
				r.logOverflow(st, id, "QP "+handles[i]+" "+c.key.String(), raw)
				continue
			}
			r.bulk.add(points(c.name, len(qps)), st.start, ts, int64(raw), "qp", handles[i], 0)
		}
	}
	if !r.opcodeOn {
		return
	}
	dps = pmetric.NumberDataPointSlice{}
	name := metadata.MetricsInfo.ErnicQpWqesByOpcode.Name
	for i, q := range qps {
		for _, op := range q.Opcodes {
			if r.otherClash(q, op.Name, id, handles[i], errs) {
				continue
			}
			if op.Value > math.MaxInt64 {
				r.logOverflow(st, id, "QP "+handles[i]+" opcode "+op.Name, op.Value)
				continue
			}
			r.bulk.add(points(name, len(qps)*(len(q.Opcodes)+1)), st.start, ts, int64(op.Value), "qp", handles[i], 1).PutStr("opcode", op.Name)
		}
		// A wrapped `(other opcodes)`: see recordQPs.
		if q.HasOther && q.Other <= math.MaxInt64 {
			r.bulk.add(points(name, len(qps)*(len(q.Opcodes)+1)), st.start, ts, int64(st.holdOther(q.Handle, q.Other)), "qp", handles[i], 1).PutStr("opcode", "other")
		}
	}
}

// otherClash reports an opcode line named "other" in a block that also has
// `(other opcodes)`: they would be one series. The line is left out.
func (r *statsRecorder) otherClash(q *rundir.QP, name, id, handle string, errs *scrapeErrors) bool {
	if name != "other" || !q.HasOther {
		return false
	}
	errs.add("opcode-other:"+id, 1, fmt.Errorf("instance %s QP %s: an opcode line named %q and (other opcodes) would be one series (opcode=%q); the opcode line is not published", id, handle, name, name))
	return true
}

// logOverflow logs a counter above 2^63-1 once per process and counter.
func (r *statsRecorder) logOverflow(st *instanceState, id, name string, v uint64) {
	if !st.logOverflowOnce(name) {
		return
	}
	r.logger.Warn("Counter above 2^63-1 not published (an OTLP or Prometheus integer cannot hold it); logged once per server process",
		zap.String("ernic.id", id), zap.String("counter", name), zap.Uint64("value", v), zap.Int("pid", st.pid))
}

// sumDevice adds the counters; false when one is missing or the sum overflows.
func sumDevice(d *rundir.Device, keys ...rundir.DeviceKey) (uint64, bool) {
	var total uint64
	for _, k := range keys {
		v, ok := d.Get(k)
		if !ok || total+v < total {
			return 0, false
		}
		total += v
	}
	return total, true
}

// publishedQPs returns all QPs, or the limit of lowest handle (handles only
// accumulate while a server lives, so the choice is stable).
func publishedQPs(qps []rundir.QP, limit int) []*rundir.QP {
	out := make([]*rundir.QP, len(qps))
	for i := range qps {
		out[i] = &qps[i]
	}
	if limit > 0 && len(out) > limit {
		slices.SortFunc(out, func(a, b *rundir.QP) int { return cmp.Compare(a.Handle, b.Handle) })
		out = out[:limit]
	}
	return out
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/procs"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// ernicScraper turns the run directory and /proc into metrics. It keeps, per
// manifest instance, the owning process and its last complete stats file, so
// that counters carry the process start time and a torn read never publishes
// a cut file.
type ernicScraper struct {
	cfg    *Config
	logger *zap.Logger
	// failed is the number of points the last scrape could not publish
	// (every fault counted, logged or not): the receiver's
	// scraper_errored_metric_points.
	failed int
	mb     *metadata.MetricsBuilder
	reader *rundir.Reader
	procs  *procs.Table
	faults *faultLimiter
	// expected is the expected state (run directory absent, manifest not
	// written) the last scrape was in, logged once when entered.
	expected expectedState
	stale    *staleness
	now      func() time.Time

	manifest  *rundir.Manifest // last manifest read whole
	instances map[int64]*instanceState
	// runDir is run_dir opened for this scrape: every file is read through
	// it, so nothing outside the directory is opened. nil between scrapes.
	runDir *os.Root
	// bulk records the per-QP, LIF counter and opcode points past the
	// builder (see bulkPoints); nil when a metric has attributes turned
	// off, whose points the builder must fold within one emit. The
	// builder emits after every instance either way (its start time is
	// the instance's) and mergeResourceMetrics joins the pieces.
	bulk *bulkPoints
	// qpOn, lifOn and opcodeOn tell which bulk metrics are enabled;
	// qpOn is in the order of qpCounters.
	qpOn            []bool
	lifOn, opcodeOn bool
	scopeVersion    string
	// hostName is the host.name resource attribute of every resource
	// (when enabled): host_name, or the kernel's host name at start.
	hostName string
}

func newScraper(cfg *Config, set receiver.Settings) *ernicScraper {
	s := &ernicScraper{
		cfg:          cfg,
		logger:       set.Logger,
		mb:           metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, set),
		reader:       rundir.NewReader(cfg.MaxFileBytes),
		faults:       newFaultLimiter(faultInterval),
		stale:        newStaleness(metadata.ScopeName, set.BuildInfo.Version),
		now:          time.Now,
		instances:    map[int64]*instanceState{},
		lifOn:        cfg.Metrics.ErnicLifCounter.Enabled,
		opcodeOn:     cfg.Metrics.ErnicQpWqesByOpcode.Enabled,
		scopeVersion: set.BuildInfo.Version,
	}
	for _, c := range qpCounters {
		s.qpOn = append(s.qpOn, metricEnabled(&cfg.Metrics, c.name))
	}
	if !reaggregates(cfg.Metrics) {
		s.bulk = newBulkPoints(bulkShapes(set))
	}
	return s
}

// start opens proc_dir; an unusable proc_dir stops the collector with a
// clear error rather than reporting every instance as down.
func (s *ernicScraper) start(context.Context, component.Host) error {
	t, err := procs.New(s.cfg.ProcDir)
	if err != nil {
		return fmt.Errorf("ernic receiver: %w (set proc_dir to the host's proc filesystem)", err)
	}
	if _, err := t.BootTime(); err != nil {
		return fmt.Errorf("ernic receiver: proc_dir %q: %w (set proc_dir to the host's proc filesystem)", s.cfg.ProcDir, err)
	}
	s.procs = t
	if t.Hidden() {
		s.logger.Warn("proc_dir is mounted with hidepid: other users' processes are hidden (its stat is readable, its 1 is not), so the liveness of root's rocm-ernic servers cannot be known; "+
			"their ernic.instance.up and uptime are not published and their start times are the first scrape's. "+
			"Fix: mount -o remount,hidepid=off <proc_dir> (or hidepid=invisible,gid=<a group of the collector's user>, without PrivateUsers=), drop ProtectProc= from the unit, or run the collector as root",
			zap.String("proc_dir", s.cfg.ProcDir))
	}
	s.hostName = s.cfg.HostName
	if s.hostName == "" && s.cfg.ResourceAttributes.HostName.Enabled {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return fmt.Errorf("ernic receiver: the host name for host.name: %v (set host_name)", err)
		}
		s.hostName = h
	}
	return nil
}

// scrape returns all the batches of one scrape (scrapeEach) in one
// pmetric.Metrics, and its error.
func (s *ernicScraper) scrape(ctx context.Context) (pmetric.Metrics, error) {
	all := pmetric.NewMetrics()
	err := s.scrapeEach(ctx, func(md pmetric.Metrics) {
		md.ResourceMetrics().MoveAndAppendTo(all.ResourceMetrics())
	})
	return all, err
}

// scrapeEach reads the run directory and /proc and hands emit the scrape
// in batches, so that no more than one instance's points are built at a
// time: one batch per instance (its resource, with the markers of its
// series that ended), then one with the cluster gauges and the markers of
// the instances that left. The error lists the faults due for a log line
// (faultLimiter); it is a partial scrape error when points were published.
func (s *ernicScraper) scrapeEach(ctx context.Context, emit func(pmetric.Metrics)) error {
	now := s.now()
	ts := pcommon.NewTimestampFromTime(now)
	errs := &scrapeErrors{s: s, now: now}
	s.faults.prune(now)
	s.stale.begin()
	points := 0
	publish := func(md pmetric.Metrics) {
		rms := md.ResourceMetrics()
		for i := range rms.Len() {
			s.stale.mark(rms.At(i), ts)
		}
		points += md.DataPointCount()
		emit(md)
	}

	last := pmetric.NewMetrics()
	var cut error
	m, ok := s.readManifest(ctx, errs)
	if ok {
		var cluster pmetric.ResourceMetricsSlice
		cluster, cut = s.recordInstances(ctx, publish, m, now, ts, errs)
		cluster.MoveAndAppendTo(last.ResourceMetrics())
	} else if err := ctx.Err(); err != nil {
		cut = fmt.Errorf("scrape cut while reading the manifest: %w", err)
	}
	if s.runDir != nil {
		s.runDir.Close()
		s.runDir = nil
	}
	s.reader.Trim()
	rms := last.ResourceMetrics()
	for i := range rms.Len() {
		s.stale.mark(rms.At(i), ts)
	}
	// A cut scrape did not see the instances it did not reach: their
	// series are not ended.
	s.stale.finish(ts, cut != nil).ResourceMetrics().MoveAndAppendTo(rms)
	if rms.Len() > 0 {
		points += last.DataPointCount()
		emit(last)
	}
	if cut != nil {
		errs.errs = append(errs.errs, cut)
	}
	s.failed = errs.failed
	if len(errs.errs) == 0 {
		if errs.failed == 0 {
			return nil
		}
		// Every fault was reported before: the error says so only, and
		// still carries the count of failed points.
		err := fmt.Errorf("%w: %d points", errFaultsReported, errs.failed)
		if points == 0 {
			return err
		}
		return scrapererror.NewPartialScrapeError(err, errs.failed)
	}
	err := errors.Join(errs.errs...)
	if points == 0 {
		return err
	}
	return scrapererror.NewPartialScrapeError(err, errs.failed)
}

// readManifest reads instances.json. A missing run directory or manifest
// means nothing to publish; a manifest that stays torn or invalid through
// the retries falls back to the last good one.
func (s *ernicScraper) readManifest(ctx context.Context, errs *scrapeErrors) (*rundir.Manifest, bool) {
	path := filepath.Join(s.cfg.RunDir, rundir.ManifestFile)
	// Opened anew each scrape: the directory may have been removed and
	// created again since the last one.
	root, err := os.OpenRoot(s.cfg.RunDir)
	var m *rundir.Manifest
	if err == nil {
		s.runDir = root
		m, err = s.reader.ReadManifest(ctx, root)
	}
	if err == nil {
		s.expected.leave()
		if n := len(m.Problems); n > 0 {
			// Keyed on the count and the first problem: a manifest
			// that gets worse, or bad in another way, is reported at once.
			errs.add(fmt.Sprintf("manifest-entries:%d:%v", n, m.Problems[0]), n, fmt.Errorf("%s: %d unusable entries or keys, the first: %w", path, n, m.Problems[0]))
		}
		s.manifest = m
		return m, true
	}
	if s.runDir == nil || errors.Is(err, fs.ErrNotExist) {
		switch {
		case s.runDir != nil:
			// Expected states (rocm-ernic starting, or stopped): logged
			// once at Info, not scrape errors.
			s.expected.enter(s.logger, "Manifest not written yet: nothing to publish until the launcher writes it", path)
		case errors.Is(err, fs.ErrNotExist):
			s.expected.enter(s.logger, "Run directory absent: nothing to publish until rocm-ernic creates it", s.cfg.RunDir)
		default:
			// There, but not a directory that can be opened: a fault.
			s.expected.leave()
			errs.add("run-dir:"+err.Error(), 0, fmt.Errorf("run directory %s: %w; nothing to publish", s.cfg.RunDir, err))
		}
		// The instances' state (owning process, start time, last
		// snapshot) is kept: when the directory comes back with the same
		// server processes, their counters go on under the same start.
		s.manifest = nil
		return nil, false
	}
	s.expected.leave()
	if s.manifest != nil {
		errs.add("manifest:"+err.Error(), 1, fmt.Errorf("%w; using the last complete manifest", err))
		return s.manifest, true
	}
	errs.add("manifest:"+err.Error(), 1, err)
	return nil, false
}

// readStats reads the instance's stats file into st: a complete file of the
// owning process becomes the current snapshot; a torn one leaves the last
// snapshot of the same process in place; a missing file or one left by a
// previous process leaves none.
func (s *ernicScraper) readStats(ctx context.Context, inst *rundir.Instance, id string, st *instanceState, now time.Time, errs *scrapeErrors) {
	path := filepath.Join(s.cfg.RunDir, inst.StatsFile())
	if st.unchanged(s.runDir, inst.StatsFile()) {
		return // the snapshot is the file's content
	}
	stats, info, err := s.reader.ReadStats(ctx, s.runDir, inst.StatsFile(), st.spare, st.checkShape)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The server has not written its first file yet: no device metrics.
		st.stats = nil
	case err != nil && ctx.Err() != nil:
		// The scrape was cut (recordInstances reports it); the last
		// snapshot stays.
	case err != nil:
		kind := "unreadable"
		switch {
		case errors.Is(err, rundir.ErrShrunk):
			kind = "shrunk"
			st.shrunkScrapes++
		case errors.Is(err, rundir.ErrIncomplete), errors.Is(err, rundir.ErrChanged):
			kind = "torn"
		}
		what := "no device metrics this scrape"
		if st.stats != nil {
			what = "publishing the last complete read of " + st.seenAt.Format(time.RFC3339)
		}
		key := "stats-" + kind + ":" + id
		if kind == "unreadable" {
			key += ":" + err.Error() // another cause is another fault
		}
		errs.add(key, 1, fmt.Errorf("instance %s: %w; %s", id, err, what))
	case st.fromPreviousProcess(stats, info.ModTime()):
		// The new server process has not written yet: these counters
		// belong to the previous one and its start time. Normal for the
		// moments after a start; a live server whose file stays older
		// than the process is reported (a file restored or touched by
		// hand, a server that cannot write). A process that replaced
		// the one seen at the same pid is reported as not the server
		// (notServer) instead.
		st.wrote(info.ModTime())
		st.stats = nil
		if now.Sub(st.procStart) > oldFileGrace && !st.reused {
			errs.add(fmt.Sprintf("stats-before-process:%s:%d", id, st.pid), 1, fmt.Errorf("%s: modified %s, before its server process (pid %d) started at %s; not published until the server writes it",
				path, info.ModTime().Format(time.RFC3339), st.pid, st.procStart.Format(time.RFC3339)))
		}
	default:
		if n := len(stats.Problems); n > 0 {
			errs.add(fmt.Sprintf("stats-lines:%s:%d:%v", id, n, stats.Problems[0]), n, fmt.Errorf("%s: %d unusable lines, the first: %w", path, n, stats.Problems[0]))
		}
		var bad labelFaults
		st.statsTruncated = capStatsLabels(stats, s.cfg.MaxLabelLength, &bad)
		if bad.n > 0 {
			errs.add(fmt.Sprintf("labels-utf8:%s:%d", id, bad.n), 0, fmt.Errorf("instance %s: %d attribute values with invalid UTF-8 in %s (the first: %q); published with U+FFFD and a hash of the raw value, counted in ernic.labels.truncated",
				id, bad.n, path, bad.first))
		}
		st.wrote(info.ModTime())
		st.serverWrote()
		st.accept(stats, info, now)
	}
}

func (s *ernicScraper) recordVM(inst *rundir.Instance, id string, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) {
	vm := inst.VM
	if vm == nil || !vm.Attached {
		s.mb.RecordErnicVMAttachedDataPoint(ts, 0, "")
		return
	}
	s.mb.RecordErnicVMAttachedDataPoint(ts, 1, vm.Name)
	gpu := int64(0)
	if vm.GPU != "" {
		gpu = 1
	}
	s.mb.RecordErnicVMGpuPassthroughDataPoint(ts, gpu)
	nowSec := float64(now.UnixNano()) / 1e9
	// launched_at must be a plausible epoch time: after 1970 and not in the
	// future (a second of clock skew allowed).
	validLaunch := vm.HasLaunchedAt && vm.LaunchedAt > 0 && vm.LaunchedAt <= nowSec+1
	if vm.HasLaunchedAt && !validLaunch {
		errs.add(fmt.Sprintf("vm-launched-at:%s:%v", id, vm.LaunchedAt), 1, fmt.Errorf("instance %s: vm.launched_at %v is not an epoch time in the past; using the age of vm_pid if any", id, vm.LaunchedAt))
	}
	switch {
	case validLaunch:
		s.mb.RecordErnicVMUptimeDataPoint(ts, max(nowSec-vm.LaunchedAt, 0))
	case vm.PID > 0:
		if p, err := s.procs.Lookup(vm.PID); err == nil && p.Alive && !p.Start.IsZero() {
			s.mb.RecordErnicVMUptimeDataPoint(ts, now.Sub(p.Start).Seconds())
		}
	}
}

// oldFileGrace is how long after a server process starts its stats file
// may still be the previous process's without a report: a server writes
// its first file within a second of starting.
const oldFileGrace = 30 * time.Second

// deviceCounters maps the device-level counters to their metrics; where a
// metric has several keys, the first one the file printed is used (current
// server name first, then the older servers').
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

// qpCounters maps the per-QP counters to their metrics.
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

// recordStats records the device, LIF and per-QP metrics of the instance's
// current snapshot; the builder's start time is already the instance's.
func (s *ernicScraper) recordStats(st *instanceState, id string, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) {
	stats := st.stats
	// counter converts a file value to the int64 of a data point; a value
	// above 2^63-1 is not published and is logged once per process. name
	// builds the counter's name only then.
	counter := func(v uint64, name func() string) (int64, bool) {
		if v <= math.MaxInt64 {
			return int64(v), true
		}
		s.logOverflow(st, id, name(), v)
		return 0, false
	}

	state := "unknown"
	if stats.HasConnection {
		state = stats.Connection
	}
	connected := int64(0)
	if strings.HasPrefix(state, "connected") {
		connected = 1
	}
	s.mb.RecordErnicConnectionUpDataPoint(ts, connected, state)
	s.mb.RecordErnicQpCountDataPoint(ts, int64(len(stats.QPs)))
	// A file written in the future (a clock stepped back, or touched by
	// hand) is 0 s old, reported: a negative age would keep
	// ErnicStatsStuck from firing for as long.
	age := now.Sub(st.statsTime).Seconds()
	if age < 0 {
		errs.add("stats-mtime-future:"+id, 1, fmt.Errorf("instance %s: stats file modified %s, %.0f s in the future; its age is published as 0", id, st.statsTime.Format(time.RFC3339), -age))
		age = 0
	}
	s.mb.RecordErnicStatsAgeDataPoint(ts, age)
	if stats.HasWriteCount {
		if v, ok := counter(stats.WriteCount, func() string { return "Write count" }); ok {
			s.mb.RecordErnicStatsWritesDataPoint(ts, v)
		}
	}

	dev := &stats.Device
	for _, c := range deviceCounters {
		for _, k := range c.keys {
			if raw, ok := dev.Get(k); ok {
				if v, ok := counter(raw, k.String); ok {
					c.record(s.mb, ts, v)
				}
				break
			}
		}
	}
	if total, ok := sumDevice(dev, rundir.BytesSent, rundir.BytesReceived, rundir.BytesRDMARead, rundir.BytesRDMAWrite); ok {
		if v, ok := counter(total, func() string { return "total_bytes_sent+received+rdma_read+rdma_write" }); ok {
			s.mb.RecordErnicRdmaBytesDataPoint(ts, v)
		}
	}
	if total, ok := sumDevice(dev, rundir.IPBytesTx, rundir.IPBytesRx); ok {
		if v, ok := counter(total, func() string { return "total_ip_bytes_tx+rx" }); ok {
			s.mb.RecordErnicIPBytesDataPoint(ts, v)
		}
	}

	qps := publishedQPs(stats.QPs, s.cfg.MaxQPsPerInstance)
	s.mb.RecordErnicQpUnpublishedDataPoint(ts, int64(len(stats.QPs)-len(qps)))
	if s.bulk != nil {
		s.recordBulk(st, qps, id, ts, errs)
		return
	}
	for _, c := range stats.LIF {
		if v, ok := counter(c.Value, func() string { return c.Name }); ok {
			s.mb.RecordErnicLifCounterDataPoint(ts, v, c.Name)
		}
	}
	for _, q := range qps {
		handle := strconv.FormatUint(uint64(q.Handle), 10)
		for _, c := range qpCounters {
			if raw, ok := q.Get(c.key); ok {
				if v, ok := counter(raw, func() string { return "QP " + handle + " " + c.key.String() }); ok {
					c.record(s.mb, ts, v, handle)
				}
			}
		}
		if !s.opcodeOn {
			continue
		}
		for _, op := range q.Opcodes {
			if s.otherClash(q, op.Name, id, handle, errs) {
				continue
			}
			if v, ok := counter(op.Value, func() string { return "QP " + handle + " opcode " + op.Name }); ok {
				s.mb.RecordErnicQpWqesByOpcodeDataPoint(ts, v, handle, op.Name)
			}
		}
		// A wrapped `(other opcodes)` is the server's unsigned subtraction
		// going below zero: garbage by design, dropped without a log line.
		if q.HasOther && q.Other <= math.MaxInt64 {
			s.mb.RecordErnicQpWqesByOpcodeDataPoint(ts, int64(st.holdOther(q.Handle, q.Other)), handle, "other")
		}
	}
}

// recordBulk records the LIF counter, per-QP and opcode points of the
// instance's snapshot through s.bulk, metric by metric: the same points,
// in the same order within each metric, as the builder path of
// recordStats.
func (s *ernicScraper) recordBulk(st *instanceState, qps []*rundir.QP, id string, ts pcommon.Timestamp, errs *scrapeErrors) {
	var dps pmetric.NumberDataPointSlice
	// points returns the points of the metric called name, added to the
	// scrape at its first point: a metric without points is not published.
	// n is the expected number of points, the slice's first capacity.
	points := func(name string, n int) pmetric.NumberDataPointSlice {
		if dps == (pmetric.NumberDataPointSlice{}) {
			dps = s.bulk.slice(name, n)
		}
		return dps
	}
	if s.lifOn {
		name := metadata.MetricsInfo.ErnicLifCounter.Name
		for _, c := range st.stats.LIF {
			if c.Value > math.MaxInt64 {
				s.logOverflow(st, id, c.Name, c.Value)
				continue
			}
			s.bulk.add(points(name, len(st.stats.LIF)), st.start, ts, int64(c.Value), "counter", c.Name, 0)
		}
	}
	handles := st.qpHandles(qps)
	for k, c := range qpCounters {
		if !s.qpOn[k] {
			continue
		}
		dps = pmetric.NumberDataPointSlice{}
		for i, q := range qps {
			raw, ok := q.Get(c.key)
			if !ok {
				continue
			}
			if raw > math.MaxInt64 {
				s.logOverflow(st, id, "QP "+handles[i]+" "+c.key.String(), raw)
				continue
			}
			s.bulk.add(points(c.name, len(qps)), st.start, ts, int64(raw), "qp", handles[i], 0)
		}
	}
	if !s.opcodeOn {
		return
	}
	dps = pmetric.NumberDataPointSlice{}
	name := metadata.MetricsInfo.ErnicQpWqesByOpcode.Name
	for i, q := range qps {
		for _, op := range q.Opcodes {
			if s.otherClash(q, op.Name, id, handles[i], errs) {
				continue
			}
			if op.Value > math.MaxInt64 {
				s.logOverflow(st, id, "QP "+handles[i]+" opcode "+op.Name, op.Value)
				continue
			}
			s.bulk.add(points(name, len(qps)*(len(q.Opcodes)+1)), st.start, ts, int64(op.Value), "qp", handles[i], 1).PutStr("opcode", op.Name)
		}
		// A wrapped `(other opcodes)` is the server's unsigned subtraction
		// going below zero: garbage by design, dropped without a log line.
		if q.HasOther && q.Other <= math.MaxInt64 {
			s.bulk.add(points(name, len(qps)*(len(q.Opcodes)+1)), st.start, ts, int64(st.holdOther(q.Handle, q.Other)), "qp", handles[i], 1).PutStr("opcode", "other")
		}
	}
}

// otherClash reports whether an opcode line of QP q is named "other"
// while the block also has `(other opcodes)`, which the metric contract
// publishes as opcode "other": the two would be one series, their values
// summed or one hiding the other. The derived `(other opcodes)` keeps the
// name; the opcode line is left out and reported.
func (s *ernicScraper) otherClash(q *rundir.QP, name, id, handle string, errs *scrapeErrors) bool {
	if name != "other" || !q.HasOther {
		return false
	}
	errs.add("opcode-other:"+id, 1, fmt.Errorf("instance %s QP %s: an opcode line named %q and (other opcodes) would be one series (opcode=%q); the opcode line is not published", id, handle, name, name))
	return true
}

// logOverflow logs, once per server process and counter, a counter value
// that an int64 data point cannot hold.
func (s *ernicScraper) logOverflow(st *instanceState, id, name string, v uint64) {
	if st.overflowLogged[name] {
		return
	}
	if st.overflowLogged == nil {
		st.overflowLogged = map[string]bool{}
	}
	st.overflowLogged[name] = true
	s.logger.Warn("Counter above 2^63-1 not published (an OTLP or Prometheus integer cannot hold it); logged once per server process",
		zap.String("ernic.id", id), zap.String("counter", name), zap.Uint64("value", v), zap.Int("pid", st.pid))
}

// reaggregates reports whether an enabled metric of mc has fewer attributes
// than by default (the generated `attributes` setting). The builder then
// folds points whose remaining attributes are equal, with the metric's
// aggregation_strategy, but only among the points of one emit: such a
// scrape is recorded in one piece. Its cost then grows with the square of
// the points each metric keeps after folding: small when the attribute
// dropped tells series apart (qp, counter), as without pieces otherwise.
func reaggregates(mc metadata.MetricsConfig) bool {
	got, def := reflect.ValueOf(mc), reflect.ValueOf(metadata.DefaultMetricsConfig())
	for i := range got.NumField() {
		m := got.Field(i)
		attrs := m.FieldByName("EnabledAttributes")
		if !attrs.IsValid() {
			continue // a metric without attributes
		}
		if m.FieldByName("Enabled").Bool() && attrs.Len() < def.Field(i).FieldByName("EnabledAttributes").Len() {
			return true
		}
	}
	return false
}

// sumDevice adds the given device counters; false when one is missing or the
// sum overflows uint64.
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

// publishedQPs returns the QPs whose series are published: all of them, or
// with a limit the limit QPs of lowest handle (handles only accumulate while
// a server lives, so the choice is stable from scrape to scrape).
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	// health is the run directory's state: the expected states (run
	// directory absent, manifest not written) logged once, and the
	// component status reported when nothing can be published.
	health *runDirHealth
	stale  *staleness
	now    func() time.Time

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
		health:       newRunDirHealth(set.Logger, cfg.UnhealthyAfter),
		stale:        newStaleness(metadata.ScopeName, set.BuildInfo.Version),
		now:          time.Now,
		instances:    map[int64]*instanceState{},
		lifOn:        cfg.Metrics.ErnicLifCounter.Enabled,
		opcodeOn:     cfg.Metrics.ErnicQpWqesByOpcode.Enabled,
		scopeVersion: set.BuildInfo.Version,
	}
	for _, c := range qpCounters {
		s.qpOn = append(s.qpOn, *enabledFlag(&cfg.Metrics, c.name))
	}
	if !reaggregates(cfg.Metrics) {
		s.bulk = newBulkPoints(bulkShapes(set))
	}
	return s
}

// start opens proc_dir; an unusable proc_dir stops the collector with a
// clear error rather than reporting every instance as down. It says which
// run directory is read (a missing one is no error: rocm-ernic may start
// later).
func (s *ernicScraper) start(_ context.Context, host component.Host) error {
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
	s.health.start(host, s.cfg.RunDir)
	return nil
}

// shutdown closes what start opened.
func (s *ernicScraper) shutdown() {
	if s.procs != nil {
		s.procs.Close()
	}
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
	s.health.begin()
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
	} else {
		// Nothing else is published; the gauge says why the host is silent.
		s.mb.Reset(metadata.WithStartTime(0))
		s.mb.RecordErnicRunDirReadableDataPoint(ts, 0)
		rb := s.mb.NewResourceBuilder()
		rb.SetHostName(s.hostName)
		s.mb.Emit(metadata.WithResource(rb.Emit())).ResourceMetrics().MoveAndAppendTo(last.ResourceMetrics())
	}
	if s.runDir != nil {
		s.runDir.Close()
		s.runDir = nil
	}
	s.reader.Trim()
	s.procs.CloseUnused() // the stat files of pids gone from the manifest
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
	} else {
		// A cut scrape (its timeout) says nothing of the run directory.
		s.health.end(now)
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
		s.health.leaveExpected()
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
			s.health.enterExpected(msgManifestAbsent, path)
		case errors.Is(err, fs.ErrNotExist):
			s.health.enterExpected(msgRunDirAbsent, s.cfg.RunDir)
		default:
			// There, but not a directory that can be opened: a fault.
			s.health.leaveExpected()
			err = fmt.Errorf("run directory %s: %w; nothing to publish", s.cfg.RunDir, err)
			s.health.fail(err)
			errs.add("run-dir:"+err.Error(), 0, err)
		}
		// The instances' state (owning process, start time, last
		// snapshot) is kept: when the directory comes back with the same
		// server processes, their counters go on under the same start.
		s.manifest = nil
		return nil, false
	}
	s.health.leaveExpected()
	if s.manifest != nil {
		errs.add("manifest:"+err.Error(), 1, fmt.Errorf("%w; using the last complete manifest", err))
		return s.manifest, true
	}
	if ctx.Err() == nil {
		s.health.fail(err)
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
		s.health.statsUnread(fmt.Errorf("instance %s: %w", id, err))
	case st.fromPreviousProcess(stats, info.ModTime()):
		// The new server process has not written yet: these counters
		// belong to the previous one and its start time. Normal for the
		// moments after a start; a live server whose file stays older
		// than the process is reported (a file restored or touched by
		// hand, a server that cannot write). A process that replaced
		// the one seen at the same pid is reported as not the server
		// (notServer) instead.
		st.wrote(info.ModTime(), now)
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
		st.wrote(info.ModTime(), now)
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

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
	"slices"
	"strconv"
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

// ernicScraper turns the run directory and /proc into metrics, keeping each
// instance's process and last complete stats file between scrapes.
type ernicScraper struct {
	cfg    *Config
	logger *zap.Logger
	// failed counts the points the last scrape could not publish.
	failed int
	mb     *metadata.MetricsBuilder
	reader *rundir.Reader
	procs  *procs.Table
	faults *faultLimiter
	// health logs the expected states once and reports the component status.
	health *runDirHealth
	stale  *staleness
	now    func() time.Time

	manifest  *rundir.Manifest // last manifest read whole
	instances map[int64]*instanceState
	// runDir is run_dir opened for this scrape, so nothing outside it is opened.
	runDir *os.Root
	// bulk records the per-QP, LIF and opcode points past the builder; nil when
	// a metric has attributes off, whose points the builder must fold.
	bulk         *bulkPoints
	scopeVersion string
	// hostName is host_name, or the kernel's host name at start.
	hostName string
	// rec records one instance; made at start.
	rec *instanceRecorder
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
		scopeVersion: set.BuildInfo.Version,
	}
	if !reaggregates(cfg.Metrics) {
		s.bulk = newBulkPoints(bulkShapes(set))
	}
	return s
}

// start fails on an unusable proc_dir rather than report every instance as
// down; a missing run directory is no error (rocm-ernic may start later).
func (s *ernicScraper) start(_ context.Context, host component.Host) error {
	t, err := procs.New(s.cfg.ProcDir)
	if err != nil {
		return fmt.Errorf("ernic receiver: %w (set proc_dir to the host's proc filesystem)", err)
	}
	boot, err := t.BootTime()
	if err != nil {
		return fmt.Errorf("ernic receiver: proc_dir %q: %w (set proc_dir to the host's proc filesystem)", s.cfg.ProcDir, err)
	}
	s.procs = t
	if t.Hidden() {
		s.logger.Warn("proc_dir is mounted with hidepid: other users' processes are hidden (its stat is readable, its 1 is not), so the liveness of root's rocm-ernic servers cannot be known; "+
			"their ernic.instance.up and uptime are not published and their counters start at the host's boot time. "+
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
	s.rec = &instanceRecorder{
		mb:             s.mb,
		bulk:           s.bulk,
		stats:          newStatsRecorder(s.cfg, s.mb, s.bulk, s.logger),
		procs:          t,
		boot:           boot,
		reader:         s.reader,
		health:         s.health,
		runDir:         s.cfg.RunDir,
		maxLabelLength: s.cfg.MaxLabelLength,
		hostName:       s.hostName,
		scopeVersion:   s.scopeVersion,
	}
	s.health.start(host, s.cfg.RunDir)
	return nil
}

func (s *ernicScraper) shutdown() {
	if s.procs != nil {
		s.procs.Close()
	}
}

func (s *ernicScraper) scrape(ctx context.Context) (pmetric.Metrics, error) {
	all := pmetric.NewMetrics()
	err := s.scrapeEach(ctx, func(md pmetric.Metrics) {
		md.ResourceMetrics().MoveAndAppendTo(all.ResourceMetrics())
	})
	return all, err
}

// scrapeEach hands emit one batch per instance, then the cluster's, so that
// only one instance's points are built at a time.
func (s *ernicScraper) scrapeEach(ctx context.Context, emit func(pmetric.Metrics)) error {
	now := s.now()
	ts := pcommon.NewTimestampFromTime(now)
	errs := newScrapeErrors(s.faults, now)
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
	// A cut scrape did not reach every instance: their series are not ended.
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
		// Every fault was reported before: say so, with the count of failed points.
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

// readManifest reads instances.json; one that stays torn or invalid falls
// back to the last good one.
func (s *ernicScraper) readManifest(ctx context.Context, errs *scrapeErrors) (*rundir.Manifest, bool) {
	path := filepath.Join(s.cfg.RunDir, rundir.ManifestFile)
	// Opened anew each scrape: the directory may have been created again.
	root, err := os.OpenRoot(s.cfg.RunDir)
	var m *rundir.Manifest
	if err == nil {
		s.runDir = root
		m, err = s.reader.ReadManifest(ctx, root)
	}
	if err == nil {
		s.health.leaveExpected()
		if n := len(m.Problems); n > 0 {
			// Keyed on the count and first problem: a worse manifest is reported at once.
			errs.add(fmt.Sprintf("manifest-entries:%d:%v", n, m.Problems[0]), n, fmt.Errorf("%s: %d unusable entries or keys, the first: %w", path, n, m.Problems[0]))
		}
		s.manifest = m
		return m, true
	}
	if s.runDir == nil || errors.Is(err, fs.ErrNotExist) {
		switch {
		case s.runDir != nil:
			// Expected while rocm-ernic starts or is stopped: logged once, no error.
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
		// State is kept: the same processes coming back go on under the same start.
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

// recordInstances publishes one batch per published instance and returns the
// cluster gauges, also when ctx ends (it stops before the next instance).
func (s *ernicScraper) recordInstances(ctx context.Context, publish func(pmetric.Metrics), m *rundir.Manifest, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) (pmetric.ResourceMetricsSlice, error) {
	insts := publishedInstances(m.Instances, s.cfg.MaxInstances)
	held := len(m.Instances) - len(insts)
	if held > 0 && s.faults.due("instances-cap:"+strconv.Itoa(held), now) {
		s.logger.Warn("Instances over max_instances are not published (those with the highest ids); ernic.instances.unpublished counts them",
			zap.Int("instances", len(m.Instances)), zap.Int("max_instances", s.cfg.MaxInstances), zap.Int("unpublished", held))
	}
	s.forgetLeft(insts)
	var cut error
	for i, inst := range insts {
		if err := ctx.Err(); err != nil {
			cut = fmt.Errorf("scrape cut after %d of %d instances: %w", i, len(insts), err)
			errs.failed += len(insts) - i
			break
		}
		st := s.instances[inst.ID]
		if st == nil {
			st = &instanceState{}
			s.instances[inst.ID] = st
		}
		s.rec.record(ctx, s.runDir, publish, inst, st, now, ts, errs)
	}
	if err := ctx.Err(); cut == nil && err != nil {
		cut = fmt.Errorf("scrape cut at its last instance: %w", err)
	}
	s.health.checkStats(len(insts))
	vms := 0
	for i := range m.Instances {
		if vm := m.Instances[i].VM; vm != nil && vm.Attached {
			vms++
		}
	}
	// The cluster gauges have no start time; their resource is the host only.
	s.mb.Reset(metadata.WithStartTime(0))
	s.mb.RecordErnicInstancesDataPoint(ts, int64(len(m.Instances)))
	s.mb.RecordErnicInstancesUnpublishedDataPoint(ts, int64(held))
	s.mb.RecordErnicVmsDataPoint(ts, int64(vms))
	s.mb.RecordErnicRunDirReadableDataPoint(ts, 1)
	rb := s.mb.NewResourceBuilder()
	rb.SetHostName(s.hostName)
	return s.mb.Emit(metadata.WithResource(rb.Emit())).ResourceMetrics(), cut
}

// publishedInstances returns every instance, or the limit of lowest id.
func publishedInstances(insts []rundir.Instance, limit int) []*rundir.Instance {
	n := len(insts)
	var maxID int64 = -1 // no bound
	if limit > 0 && n > limit {
		ids := make([]int64, n)
		for i := range insts {
			ids[i] = insts[i].ID
		}
		slices.Sort(ids)
		maxID, n = ids[limit-1], limit
	}
	out := make([]*rundir.Instance, 0, n)
	for i := range insts {
		if maxID < 0 || insts[i].ID <= maxID {
			out = append(out, &insts[i])
		}
	}
	return out
}

func (s *ernicScraper) forgetLeft(published []*rundir.Instance) {
	if len(s.instances) <= len(published) {
		// Steady state: every published instance is known and no other; no allocation.
		all := true
		for _, inst := range published {
			if _, ok := s.instances[inst.ID]; !ok {
				all = false
				break
			}
		}
		if all || len(s.instances) == 0 {
			return
		}
	}
	keep := make(map[int64]struct{}, len(published))
	for _, inst := range published {
		keep[inst.ID] = struct{}{}
	}
	for id := range s.instances {
		if _, ok := keep[id]; !ok {
			delete(s.instances, id)
		}
	}
}

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
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/procs"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// instanceRecorder is the per-instance stage of a scrape.
type instanceRecorder struct {
	mb *metadata.MetricsBuilder
	// bulk holds the stats recorder's bulk points (nil when off).
	bulk  *bulkPoints
	stats *statsRecorder
	procs *procs.Table
	// boot is the host's boot time, the start of a process whose own is unknown.
	boot   time.Time
	reader *rundir.Reader
	// health counts the stats files that failed to read.
	health *runDirHealth
	// runDir and maxLabelLength are run_dir and max_label_length.
	runDir         string
	maxLabelLength int
	// hostName and scopeVersion: host.name and the receiver's scope version.
	hostName, scopeVersion string
}

// record reads one instance into st and publishes its batch.
func (r *instanceRecorder) record(ctx context.Context, dir *os.Root, publish func(pmetric.Metrics), inst *rundir.Instance, st *instanceState, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) {
	id := strconv.FormatInt(inst.ID, 10)

	// The manifest may be the last good one, reused: cut its strings on a copy.
	inst = cappedCopy(inst)
	truncated := capInstanceLabels(inst, r.maxLabelLength)
	proc, err := r.procs.Lookup(inst.PID)
	if err != nil {
		errs.add("proc:"+id+":"+err.Error(), 1, fmt.Errorf("instance %s: %w", id, err))
	}
	st.observe(inst.PID, proc)
	st.track(inst.PID, proc.Start, r.boot)
	r.readStats(ctx, dir, inst, id, st, now, errs)
	if why := st.notServer(inst.PID, proc); why != "" {
		errs.add(fmt.Sprintf("not-server:%s:%d:%s", id, inst.PID, proc.Start), 1, fmt.Errorf("instance %s: %s", id, why))
		proc.Alive = false
	}

	r.mb.Reset(metadata.WithStartTime(st.start))
	up := int64(0)
	if proc.Alive {
		up = 1
		if !proc.Start.IsZero() {
			r.mb.RecordErnicInstanceUptimeDataPoint(ts, now.Sub(proc.Start).Seconds())
		}
	}
	if !proc.Unknown {
		// Under hidepid a process that cannot be seen may be alive:
		// no up point rather than a wrong 0.
		r.mb.RecordErnicInstanceUpDataPoint(ts, up, inst.MAC)
	}
	r.recordVM(inst, id, now, ts, errs)
	if st.stats != nil {
		r.stats.record(st, id, now, ts, errs)
		st.lastPublished = now
		truncated += st.statsTruncated
	}
	r.mb.RecordErnicLabelsTruncatedDataPoint(ts, int64(truncated))
	r.emitInstance(publish, id, inst.Role)
}

// readStats makes a complete file of the owning process the snapshot; a torn
// one keeps the last, a missing or previous process's file leaves none.
func (r *instanceRecorder) readStats(ctx context.Context, dir *os.Root, inst *rundir.Instance, id string, st *instanceState, now time.Time, errs *scrapeErrors) {
	path := filepath.Join(r.runDir, inst.StatsFile())
	if st.unchanged(dir, inst.StatsFile()) {
		return // the snapshot is the file's content
	}
	stats, info, err := r.reader.ReadStats(ctx, dir, inst.StatsFile(), st.spare, st.checkShape)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The server has not written its first file yet: no device metrics.
		st.stats = nil
	case err != nil && ctx.Err() != nil:
		// The scrape was cut (recordInstances reports it); the snapshot stays.
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
		r.health.statsUnread(fmt.Errorf("instance %s: %w", id, err))
	case st.fromPreviousProcess(stats, info.ModTime()):
		// The new process has not written yet. A file that stays older than a live
		// server is reported; a process that took the pid is reported by notServer.
		st.wrote(info.ModTime(), now)
		st.stats = nil
		if now.Sub(st.procStart) > oldFileGrace && !st.pidReused() {
			errs.add(fmt.Sprintf("stats-before-process:%s:%d", id, st.pid), 1, fmt.Errorf("%s: modified %s, before its server process (pid %d) started at %s; not published until the server writes it",
				path, info.ModTime().Format(time.RFC3339), st.pid, st.procStart.Format(time.RFC3339)))
		}
	default:
		if n := len(stats.Problems); n > 0 {
			errs.add(fmt.Sprintf("stats-lines:%s:%d:%v", id, n, stats.Problems[0]), n, fmt.Errorf("%s: %d unusable lines, the first: %w", path, n, stats.Problems[0]))
		}
		var bad labelFaults
		st.statsTruncated = capStatsLabels(stats, r.maxLabelLength, &bad)
		if bad.n > 0 {
			errs.add(fmt.Sprintf("labels-utf8:%s:%d", id, bad.n), 0, fmt.Errorf("instance %s: %d attribute values with invalid UTF-8 in %s (the first: %q); published with U+FFFD and a hash of the raw value, counted in ernic.labels.truncated",
				id, bad.n, path, bad.first))
		}
		st.wrote(info.ModTime(), now)
		st.serverWrote()
		st.accept(stats, info, now)
	}
}

// recordVM records the gauges of the VM the instance serves, if any.
func (r *instanceRecorder) recordVM(inst *rundir.Instance, id string, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) {
	vm := inst.VM
	if vm == nil || !vm.Attached {
		r.mb.RecordErnicVMAttachedDataPoint(ts, 0, "")
		return
	}
	r.mb.RecordErnicVMAttachedDataPoint(ts, 1, vm.Name)
	gpu := int64(0)
	if vm.GPU != "" {
		gpu = 1
	}
	r.mb.RecordErnicVMGpuPassthroughDataPoint(ts, gpu)
	nowSec := float64(now.UnixNano()) / 1e9
	// launched_at must be after 1970 and not in the future (a second of skew).
	validLaunch := vm.HasLaunchedAt && vm.LaunchedAt > 0 && vm.LaunchedAt <= nowSec+1
	if vm.HasLaunchedAt && !validLaunch {
		errs.add(fmt.Sprintf("vm-launched-at:%s:%v", id, vm.LaunchedAt), 1, fmt.Errorf("instance %s: vm.launched_at %v is not an epoch time in the past; using the age of vm_pid if any", id, vm.LaunchedAt))
	}
	switch {
	case validLaunch:
		r.mb.RecordErnicVMUptimeDataPoint(ts, max(nowSec-vm.LaunchedAt, 0))
	case vm.PID > 0:
		if p, err := r.procs.Lookup(vm.PID); err == nil && p.Alive && !p.Start.IsZero() {
			r.mb.RecordErnicVMUptimeDataPoint(ts, now.Sub(p.Start).Seconds())
		}
	}
}

// emitInstance publishes the instance's resource and metrics.
func (r *instanceRecorder) emitInstance(publish func(pmetric.Metrics), id, role string) {
	rb := r.mb.NewResourceBuilder()
	rb.SetErnicID(id)
	rb.SetRole(role)
	rb.SetHostName(r.hostName)
	res := rb.Emit()
	md := r.mb.Emit(metadata.WithResource(res))
	rms := md.ResourceMetrics()
	if r.bulk != nil && r.bulk.out.Len() > 0 {
		if rms.Len() == 0 {
			rm := rms.AppendEmpty()
			res.MoveTo(rm.Resource())
			sm := rm.ScopeMetrics().AppendEmpty()
			sm.Scope().SetName(metadata.ScopeName)
			sm.Scope().SetVersion(r.scopeVersion)
		}
		r.bulk.moveTo(rms.At(0).ScopeMetrics().At(0).Metrics())
	}
	if rms.Len() > 0 {
		clearGaugeStarts(rms.At(0).ScopeMetrics().At(0).Metrics())
		publish(md)
	}
}

// clearGaugeStarts takes off the start time the builder gives every point: a
// gauge's means nothing (OTLP), and a backend with start-time zero samples
// (Prometheus 3's created-timestamp ingestion) writes a 0 the gauge never had.
func clearGaugeStarts(ms pmetric.MetricSlice) {
	for i := range ms.Len() {
		if m := ms.At(i); m.Type() == pmetric.MetricTypeGauge {
			dps := m.Gauge().DataPoints()
			for j := range dps.Len() {
				dps.At(j).SetStartTimestamp(0)
			}
		}
	}
}

// oldFileGrace: a server writes its first file within a second of starting.
const oldFileGrace = 30 * time.Second

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"
)

// recordInstances publishes one batch per published manifest instance
// (publishedInstances), its resource (ernic.id, role, host.name when
// enabled), and returns the cluster gauges in a resource with host.name
// only. Every step is linear in the manifest's instances. When ctx ends,
// it stops before the next instance and returns an error wrapping
// ctx.Err(); the cluster gauges are still returned.
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
		s.recordInstance(ctx, publish, inst, now, ts, errs)
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
	// The cluster gauges have no start time; their resource is the host
	// only.
	s.mb.Reset(metadata.WithStartTime(0))
	s.mb.RecordErnicInstancesDataPoint(ts, int64(len(m.Instances)))
	s.mb.RecordErnicInstancesUnpublishedDataPoint(ts, int64(held))
	s.mb.RecordErnicVmsDataPoint(ts, int64(vms))
	s.mb.RecordErnicRunDirReadableDataPoint(ts, 1)
	rb := s.mb.NewResourceBuilder()
	rb.SetHostName(s.hostName)
	return s.mb.Emit(metadata.WithResource(rb.Emit())).ResourceMetrics(), cut
}

// publishedInstances returns the instances whose series are published, in
// manifest order: all of them, or with a limit the limit instances of
// lowest id (ids are unique, and a stable choice from scrape to scrape).
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

// forgetLeft forgets the state of the instances that are not published
// this scrape (they left the manifest, or went over max_instances), in one
// pass over each.
func (s *ernicScraper) forgetLeft(published []*rundir.Instance) {
	if len(s.instances) <= len(published) {
		// Steady state: when every published instance is remembered,
		// no other is, and nothing is allocated.
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

// emitInstance publishes the instance's resource (ernic.id, role) with the
// metrics the builder and s.bulk recorded for it.
func (s *ernicScraper) emitInstance(publish func(pmetric.Metrics), id, role string) {
	rb := s.mb.NewResourceBuilder()
	rb.SetErnicID(id)
	rb.SetRole(role)
	rb.SetHostName(s.hostName)
	res := rb.Emit()
	md := s.mb.Emit(metadata.WithResource(res))
	rms := md.ResourceMetrics()
	if s.bulk != nil && s.bulk.out.Len() > 0 {
		if rms.Len() == 0 {
			rm := rms.AppendEmpty()
			res.MoveTo(rm.Resource())
			sm := rm.ScopeMetrics().AppendEmpty()
			sm.Scope().SetName(metadata.ScopeName)
			sm.Scope().SetVersion(s.scopeVersion)
		}
		s.bulk.moveTo(rms.At(0).ScopeMetrics().At(0).Metrics())
	}
	if rms.Len() > 0 {
		publish(md)
	}
}

// recordInstance records and publishes the batch of one manifest instance.
func (s *ernicScraper) recordInstance(ctx context.Context, publish func(pmetric.Metrics), inst *rundir.Instance, now time.Time, ts pcommon.Timestamp, errs *scrapeErrors) {
	id := strconv.FormatInt(inst.ID, 10)
	st := s.instances[inst.ID]
	if st == nil {
		st = &instanceState{}
		s.instances[inst.ID] = st
	}

	// The manifest may be the last good one, reused: its strings are cut
	// on a copy, so that each scrape counts them again.
	inst = cappedCopy(inst)
	truncated := capInstanceLabels(inst, s.cfg.MaxLabelLength)
	proc, err := s.procs.Lookup(inst.PID)
	if err != nil {
		errs.add("proc:"+id+":"+err.Error(), 1, fmt.Errorf("instance %s: %w", id, err))
	}
	st.observe(inst.PID, proc)
	st.track(inst.PID, proc.Start, now)
	s.readStats(ctx, inst, id, st, now, errs)
	if why := st.notServer(inst.PID, proc); why != "" {
		errs.add(fmt.Sprintf("not-server:%s:%d:%s", id, inst.PID, proc.Start), 1, fmt.Errorf("instance %s: %s", id, why))
		proc.Alive = false
	}

	// Every point of this instance carries its counters' start time.
	s.mb.Reset(metadata.WithStartTime(st.start))
	up := int64(0)
	if proc.Alive {
		up = 1
		if !proc.Start.IsZero() {
			s.mb.RecordErnicInstanceUptimeDataPoint(ts, now.Sub(proc.Start).Seconds())
		}
	}
	if !proc.Unknown {
		// Under hidepid a process that cannot be seen may be alive:
		// no up point rather than a wrong 0.
		s.mb.RecordErnicInstanceUpDataPoint(ts, up, inst.MAC)
	}
	s.recordVM(inst, id, now, ts, errs)
	if st.stats != nil {
		s.recordStats(st, id, now, ts, errs)
		st.lastPublished = now
		truncated += st.statsTruncated
	}
	s.mb.RecordErnicLabelsTruncatedDataPoint(ts, int64(truncated))
	s.emitInstance(publish, id, inst.Role)
}

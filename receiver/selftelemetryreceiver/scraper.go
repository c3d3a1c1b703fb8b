// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package selftelemetryreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver"

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/internal/deliverystats"
	"github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver/internal/metadata"
)

// faultInterval is how often one persisting fault is logged again.
const faultInterval = 10 * time.Minute

// deliveryScraper turns the push exporters' snapshots into the receiver's
// metrics at each collection.
type deliveryScraper struct {
	cfg       *Config
	id        component.ID
	logger    *zap.Logger
	command   string
	version   string
	mb        *metadata.MetricsBuilder
	snapshots func() []deliverystats.Snapshot
	stale     *staleness
	// faults: when each fault was last logged, by its text.
	faults map[string]time.Time

	hostName string
	started  pcommon.Timestamp
	release  func()
}

func newDeliveryScraper(cfg *Config, set receiver.Settings, snapshots func() []deliverystats.Snapshot) *deliveryScraper {
	return &deliveryScraper{
		cfg: cfg, id: set.ID, logger: set.Logger, command: set.BuildInfo.Command, version: set.BuildInfo.Version,
		mb:        metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, set),
		snapshots: snapshots,
		stale:     newStaleness(),
		faults:    map[string]time.Time{},
	}
}

// start takes the host name and this receiver's identity (claim.go).
func (s *deliveryScraper) start(context.Context, component.Host) error {
	enabled := s.cfg.ResourceAttributes.HostName.Enabled
	s.hostName = s.cfg.HostName
	if s.hostName == "" && enabled {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("selftelemetry receiver: the host name for host.name: %w (set host_name)", err)
		}
		s.hostName = h
	}
	release, err := claim(s.id, identity(enabled, s.hostName))
	if err != nil {
		return err
	}
	s.release = release
	s.started = pcommon.NewTimestampFromTime(time.Now())
	return nil
}

func (s *deliveryScraper) shutdown(context.Context) error {
	if s.release != nil {
		s.release()
		s.release = nil
	}
	return nil
}

// scrape publishes the build info and each registered exporter's snapshot.
func (s *deliveryScraper) scrape(context.Context) (pmetric.Metrics, error) {
	now := time.Now()
	ts := pcommon.NewTimestampFromTime(now)
	s.mb.Reset(metadata.WithStartTime(s.started))
	s.mb.RecordOtelcolBuildInfoDataPoint(ts, 1, s.version)
	seen := map[string]bool{}
	for _, snap := range s.snapshots() {
		switch {
		case snap.Exporter == "":
			s.fault(now, "an exporter registered its delivery counts without its ID; they are not published")
			continue
		case seen[snap.Exporter]:
			// Two sets of counts under one ID would be one series twice.
			s.fault(now, fmt.Sprintf("exporter %s registered its delivery counts twice; only the first is published", snap.Exporter))
			continue
		}
		seen[snap.Exporter] = true
		s.record(ts, snap)
	}
	rb := s.mb.NewResourceBuilder()
	rb.SetHostName(s.hostName)
	rb.SetServiceName(s.command)
	md := s.mb.Emit(metadata.WithResource(rb.Emit()))
	s.stale.mark(md, ts)
	return md, nil
}

// record adds one exporter's points, its counters from its own start.
func (s *deliveryScraper) record(ts pcommon.Timestamp, snap deliverystats.Snapshot) {
	s.mb.Reset(metadata.WithStartTime(pcommon.NewTimestampFromTime(snap.Start)))
	id := snap.Exporter
	s.mb.RecordOtelcolDeliveryPointsSentDataPoint(ts, snap.PointsSent, id)
	s.mb.RecordOtelcolDeliveryBytesSentDataPoint(ts, snap.BytesSent, id)
	s.mb.RecordOtelcolDeliveryPointsNotWrittenDataPoint(ts, snap.PointsNotWritten, id)
	for _, r := range sortedKeys(snap.PointsRetried) {
		s.mb.RecordOtelcolDeliveryPointsRetriedDataPoint(ts, snap.PointsRetried[r], id, r)
	}
	for _, r := range sortedKeys(snap.PointsRejected) {
		s.mb.RecordOtelcolDeliveryPointsRejectedDataPoint(ts, snap.PointsRejected[r], id, r)
	}
	// Every reason from the start, so that increase() sees the first drop.
	dropped := slices.Clone(deliverystats.DroppedReasons)
	for _, r := range sortedKeys(snap.PointsDropped) {
		if !slices.Contains(dropped, r) {
			dropped = append(dropped, r)
		}
	}
	for _, r := range dropped {
		s.mb.RecordOtelcolDeliveryPointsDroppedDataPoint(ts, snap.PointsDropped[r], id, r)
	}

	s.mb.RecordOtelcolDeliveryQueuePointsDataPoint(ts, snap.QueuePoints, id)
	s.mb.RecordOtelcolDeliveryQueueBytesDataPoint(ts, snap.QueueBytes, id)
	if snap.QueueCapacity > 0 {
		s.mb.RecordOtelcolDeliveryQueueCapacityDataPoint(ts, snap.QueueCapacity, id, snap.QueueSizer)
	}
	if !snap.QueuedNewest.IsZero() {
		s.mb.RecordOtelcolDeliveryQueuedNewestTimestampDataPoint(ts, unixSeconds(snap.QueuedNewest), id)
	}
	if !snap.SentNewest.IsZero() {
		s.mb.RecordOtelcolDeliverySentNewestTimestampDataPoint(ts, unixSeconds(snap.SentNewest), id)
	}
	// Nothing queued: nothing older than now waits (a lag of 0), and the
	// series does not come and go with each batch.
	oldest := snap.QueuedOldest
	if oldest.IsZero() {
		oldest = ts.AsTime()
	}
	s.mb.RecordOtelcolDeliveryQueueOldestTimestampDataPoint(ts, unixSeconds(oldest), id)
}

// fault logs msg at warning the first time, then at most once per faultInterval.
func (s *deliveryScraper) fault(now time.Time, msg string) {
	if t, ok := s.faults[msg]; ok && now.Sub(t) < faultInterval {
		return
	}
	s.faults[msg] = now
	s.logger.Warn(msg, zap.Duration("logged_again_after", faultInterval))
}

// unixSeconds is t in seconds since the Unix epoch, with its fraction
// added after the whole seconds, which keeps a fraction such as .25 exact.
func unixSeconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

func sortedKeys(m map[string]int64) []string { return slices.Sorted(maps.Keys(m)) }

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// ernicReceiver runs the scraper on the controller settings' schedule and
// hands on each batch as soon as it is built, where scraperhelper's one
// pmetric.Metrics a scrape would hold every point of the host at once
// (docs/performance.md). It counts scraperhelper's two scraper metrics itself.
type ernicReceiver struct {
	cfg     *Config
	logger  *zap.Logger
	next    consumer.Metrics
	obs     *receiverhelper.ObsReport
	scraper *ernicScraper
	// telemetry holds the scraper counters; scraperAttrs their attributes.
	telemetry    *metadata.TelemetryBuilder
	scraperAttrs metric.MeasurementOption
	// gc is the gc_after_scrape pacer; nil when off.
	gc *gcPacer

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newReceiver(cfg *Config, set receiver.Settings, next consumer.Metrics) (*ernicReceiver, error) {
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	var gc *gcPacer
	if cfg.GCAfterScrape {
		gc = newGCPacer()
	}
	return &ernicReceiver{
		gc:  gc,
		cfg: cfg, logger: set.Logger, next: next, obs: obs, scraper: newScraper(cfg, set),
		telemetry: tb,
		scraperAttrs: metric.WithAttributeSet(attribute.NewSet(
			attribute.String("receiver", set.ID.String()),
			attribute.String("scraper", metadata.Type.String()),
		)),
	}, nil
}

// Start checks proc_dir and starts the scrape loop.
func (r *ernicReceiver) Start(ctx context.Context, host component.Host) error {
	if err := r.scraper.start(ctx, host); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go r.run(loopCtx)
	return nil
}

// Shutdown stops the loop and waits for a scrape in progress.
func (r *ernicReceiver) Shutdown(context.Context) error {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	r.scraper.shutdown()
	r.telemetry.Shutdown()
	return nil
}

// run scrapes after initial_delay and then every collection_interval.
func (r *ernicReceiver) run(ctx context.Context) {
	defer r.wg.Done()
	if d := r.cfg.InitialDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	tick := time.NewTicker(r.cfg.CollectionInterval)
	defer tick.Stop()
	for {
		r.scrapeOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// scrapeOnce runs one scrape, bounded by timeout when set.
func (r *ernicReceiver) scrapeOnce(ctx context.Context) {
	if r.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.cfg.Timeout)
		defer cancel()
	}
	if r.gc != nil {
		r.gc.scrapeStarted()
	}
	scraped := 0
	err := r.scraper.scrapeEach(ctx, func(md pmetric.Metrics) {
		n := md.DataPointCount()
		scraped += n
		opCtx := r.obs.StartMetricsOp(ctx)
		cerr := r.next.ConsumeMetrics(opCtx, md)
		r.obs.EndMetricsOp(opCtx, metadata.Type.String(), n, cerr)
	})
	// Counted with a context of their own: ctx may have timed out.
	r.telemetry.ScraperScrapedMetricPoints.Add(context.Background(), int64(scraped), r.scraperAttrs)
	r.telemetry.ScraperErroredMetricPoints.Add(context.Background(), int64(r.scraper.failed), r.scraperAttrs)
	if r.gc != nil {
		r.gc.scrapeEnded()
	}
	switch {
	case err == nil:
	case onlyReported(err):
		// Faults logged before and still present: counted, not logged again.
		r.logger.Debug("Scrape with faults reported before", zap.Error(err))
	default:
		// scraperhelper's line, which log alerts know; a partial scrape too.
		r.logger.Error("Error scraping metrics", zap.Error(err))
	}
}

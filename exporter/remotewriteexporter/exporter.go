// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package remotewriteexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/deliveryreport"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"
	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter/internal/translator"
)

// remoteWrite is pushqueue's core with remote write's translation and client.
type remoteWrite struct {
	*pushqueue.Exporter[*request]
	cfg    *Config
	set    exporter.Settings
	tr     *translator.Translator
	writer *writer
}

func newExporter(ctx context.Context, set exporter.Settings, cfg *Config) (*remoteWrite, error) {
	e := &remoteWrite{cfg: cfg, set: set, tr: newTranslator(cfg)}
	e.writer = &writer{
		endpoint: cfg.Endpoint, retryOnAuth: cfg.RetryOnAuthErrors,
		userAgent: pushqueue.UserAgent(set.BuildInfo), logger: set.Logger, proto: e.tr.Protocol(),
	}
	core, err := pushqueue.New(ctx, pushqueue.Settings[*request]{
		Exporter: set, Endpoint: cfg.Endpoint, Queue: cfg.QueueConfig, Retry: cfg.BackOffConfig,
		Encoding: encoding{}, Encode: e.translate, MergeWindow: cfg.MergeWindow,
		NewMerger: func(q *pushqueue.Exporter[*request]) pushqueue.Merger {
			return pushqueue.NewMerging(q, &builder{tr: e.tr, bound: q.Bound, untranslatable: q.Untranslatable})
		},
		// The client's timeout bounds each attempt.
		Send: e.writer.send, Cause: sendCause, Start: e.start,
	})
	if err != nil {
		return nil, err
	}
	e.Exporter = core
	e.writer.stopping = core.Stopping()
	return e, nil
}

// start creates the HTTP client.
func (e *remoteWrite) start(ctx context.Context, host component.Host) error {
	client, err := tlsreload.HTTPClient(ctx, e.cfg.ClientConfig, host, e.set.TelemetrySettings)
	if err != nil {
		return err
	}
	e.writer.client = client
	return nil
}

// translate makes md one queue item; points it cannot carry are counted.
func (e *remoteWrite) translate(md pmetric.Metrics) (*request, bool, error) {
	w, err := e.tr.Translate(md)
	countUntranslated(e.Untranslatable, err)
	req := requestOf(w)
	return req, len(req.payloads) > 0, nil
}

// sendCause is post's cause of a failure, for the logs and the `reason` label.
func sendCause(err error) string {
	if se := (*sendError)(nil); errors.As(err, &se) {
		return se.cause
	}
	return deliveryreport.Cause(err)
}

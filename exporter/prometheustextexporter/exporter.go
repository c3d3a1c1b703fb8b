// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package prometheustextexporter // import "github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter"

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/rocm-ernic/otelcol-ernic/exporter/internal/tlsreload"
)

// textExporter keeps the latest batch of each resource and serves them.
type textExporter struct {
	cfg    *Config
	set    exporter.Settings
	names  *namer
	now    func() time.Time
	server *http.Server
	addr   net.Addr
	done   chan struct{}

	mu   sync.RWMutex
	kept map[uint64]kept // by resourceKey
	seed maphash.Seed
}

// kept is a resource's latest batch, rendered, and when it came.
type kept struct {
	r   *rendered
	at  time.Time
	key uint64 // resourceKey, set by current
	// spare is the batch before r, which no GET writes: the next batch
	// is rendered into it. Nil when a GET wrote it as it was replaced.
	spare *rendered
}

func newExporter(set exporter.Settings, cfg *Config) *textExporter {
	return &textExporter{
		cfg:   cfg,
		set:   set,
		names: newNamer(),
		now:   time.Now,
		kept:  map[uint64]kept{},
		seed:  maphash.MakeSeed(),
	}
}

// Capabilities tells the pipeline that the batches are never changed.
func (e *textExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeMetrics renders each resource of md once, not once per GET, and
// keeps it; the batch replaced is rendered into next unless a GET writes it.
func (e *textExporter) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	now := e.now()
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		key := e.resourceKey(rm.Resource().Attributes())
		e.mu.Lock()
		k := e.kept[key]
		spare := k.spare
		k.spare = nil // not rendered into twice at once
		if k.r != nil {
			e.kept[key] = k
		}
		e.mu.Unlock()
		r := e.names.render(rm, e.cfg.ResourceToTelemetryConversion.Enabled, spare)
		e.mu.Lock()
		prev := e.kept[key].r
		next := kept{r: r, at: now}
		// Only current hands batches to GETs, under e.mu, and only r:
		// prev, no GET writing it now, can be written by none later.
		if prev != nil && prev.serving.Load() == 0 {
			next.spare = prev
		}
		e.kept[key] = next
		e.mu.Unlock()
	}
	return nil
}

// resourceKey identifies a resource by its attributes, in any order.
func (e *textExporter) resourceKey(attrs pcommon.Map) uint64 {
	var sum uint64
	for k, v := range attrs.All() {
		var h maphash.Hash
		h.SetSeed(e.seed)
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v.AsString())
		sum += h.Sum64() // order-independent
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(attrs.Len()))
	return sum ^ maphash.Bytes(e.seed, b[:])
}

// current returns the batches to serve, oldest resource first, forgetting
// the expired; each counts as served until done is called with them.
func (e *textExporter) current() []*rendered {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	all := make([]kept, 0, len(e.kept))
	for k, b := range e.kept {
		if now.Sub(b.at) > e.cfg.MetricExpiration {
			delete(e.kept, k)
			continue
		}
		b.key = k
		all = append(all, b)
	}
	// Oldest first; resources of one batch in a fixed order.
	slices.SortFunc(all, func(a, b kept) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	out := make([]*rendered, len(all))
	for i, b := range all {
		b.r.serving.Add(1)
		out[i] = b.r
	}
	return out
}

func done(rs []*rendered) {
	for _, r := range rs {
		r.serving.Add(-1)
	}
}

// ServeHTTP writes every kept batch in the text format, gzip-compressed
// when the client accepts it (Prometheus asks for gzip by default).
func (e *textExporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rs := e.current()
	defer done(rs)
	bufs := getBuffers.Get().(*serveBuffers)
	defer bufs.release()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Vary", "Accept-Encoding") // the body depends on it
	var out io.Writer = w
	var gz *gzip.Writer
	var zout *bufio.Writer // gz's output, before w
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		// klauspost's stateless level takes its buffers from pools where
		// compress/gzip allocates its own per GET (docs/performance-pipelines.md).
		// Its Write drops its error: close only if every write went through. zout
		// gathers the small writes, each a chance to lose the only P.
		zout = bufs.zout
		zout.Reset(w)
		gz, _ = gzip.NewWriterLevel(zout, gzip.StatelessCompression)
		// A zero ModTime would be written as a timestamp of 2042; 0 is
		// "none" (RFC 1952), as compress/gzip writes it.
		gz.ModTime = time.Unix(0, 0)
		out = gz
	}
	bw := bufs.text
	bw.Reset(out)
	err := write(bw, rs)
	if err == nil && gz != nil {
		err = gz.Close() // the last block and the trailer
	}
	if err == nil && zout != nil {
		err = zout.Flush()
	}
	if err != nil {
		e.set.Logger.Debug("GET /metrics: the client went away", zap.Error(err))
	}
}

// serveBuffers are a GET's text and gzip buffers, pooled: made anew they were
// most of a GET's allocations (docs/performance-pipelines.md, Pull endpoint).
type serveBuffers struct {
	text, zout *bufio.Writer
}

var getBuffers = sync.Pool{New: func() any {
	return &serveBuffers{text: bufio.NewWriterSize(nil, 64<<10), zout: bufio.NewWriterSize(nil, 64<<10)}
}}

func (b *serveBuffers) release() {
	b.text.Reset(nil)
	b.zout.Reset(nil)
	getBuffers.Put(b)
}

func acceptsGzip(h string) bool {
	for part := range strings.SplitSeq(h, ",") {
		enc, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(enc, "gzip") {
			return true
		}
	}
	return false
}

// Start listens on the endpoint and serves /metrics.
func (e *textExporter) Start(ctx context.Context, host component.Host) error {
	ln, err := tlsreload.Listener(ctx, e.cfg.ServerConfig, e.set.Logger)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", e)
	// A scraper without the right certificate or credentials fails at each
	// scrape: its handshake errors and refusals are logged once a minute per kind.
	refusals := tlsreload.ErrorLog(e.set.Logger, "prometheus_text")
	srv, err := e.cfg.ToServer(ctx, host.GetExtensions(), e.set.TelemetrySettings, mux,
		confighttp.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, msg string, code int) {
			http.Error(w, msg, code)
			refusals.Printf("refused %s %s from %s: %d %s", r.Method, r.URL.Path, r.RemoteAddr, code, msg)
		}))
	if err != nil {
		ln.Close()
		return err
	}
	srv.ErrorLog = refusals
	e.server, e.addr, e.done = srv, ln.Addr(), make(chan struct{})
	go func() {
		defer close(e.done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	}()
	return nil
}

// Shutdown stops the server.
func (e *textExporter) Shutdown(ctx context.Context) error {
	if e.server == nil {
		return nil
	}
	err := e.server.Shutdown(ctx)
	<-e.done
	return err
}

//go:build soak

// Package soak runs otelcol-ernic, as shipped with
// config/prometheus-remote-write.yaml, against the chaos simulator
// (internal/sim/chaos.go) and a real Prometheus for SOAK_DURATION (default
// 90s; `make soak` runs 1h), then checks what Prometheus stored against what
// the simulator wrote, and how the collector behaved:
//
//   - resets(): on every counter series, at most the real restarts of its
//     instance (plus the qp-reuse drops of its QP); on the write count and
//     mmio_reads_total of every worker, exactly its real restarts; and no
//     decrease between two raw samples of a sampled series unless the later
//     sample is from a later server process (or QP epoch) than the earlier;
//   - every raw sample of the sampled series (device counters, the write
//     count, QPs with a handle below 32 and their opcodes, nine LIF counters,
//     the QP count) equals the value of that series in a complete write the
//     simulator logged for that instance before the sample (never a torn
//     prefix, a symlinked or oversized file, garbage);
//   - the collector never exited; its peak RSS (VmRSS every second) stays
//     under SOAK_MAX_RSS_MIB; its goroutines (GODEBUG=schedtrace every 10s,
//     the collector has no pprof), threads and open files do not grow;
//   - each fault key (kind plus instance or file) is logged at most once per
//     fault interval (10 min), and each counter above 2^63-1 once per process.
//
// The summary is logged and written, with the simulator's and collector's
// logs, to SOAK_DIR/<time>/ when SOAK_DIR is set (else a test directory).
//
// Environment: SOAK_DURATION, SOAK_DIR, SOAK_STRICT (see knownBug),
// SOAK_MAX_RSS_MIB (default 256, the memory_limiter's limit_mib),
// SOAK_CHAOS_EVERY (default 3s), SOAK_HUGE_QPS (default 10000), SOAK_SEED
// (default 1), OTELCOL_BIN, PROMETHEUS_BIN.
package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// faultInterval is the receiver's (receiver/ernicreceiver/faults.go): a
// fault key is logged at most once per interval.
const faultInterval = 10 * time.Minute

// knownBug names the receiver bugs this soak found:
//
//  1. Fixed (commit "scraper: keep instance state across a vanished run
//     directory; overflow lines once per process"): when the run directory
//     vanished, the receiver forgot its instances, so the held `(other
//     opcodes)` maximum was lost (a lower value afterwards read as a counter
//     reset within one process) and a counter above 2^63-1 was logged again
//     for the same process; a counter drop (qp-reuse) also re-armed that
//     log line. Counted as *_after_run_dir_recreate and
//     overflow_warnings_repeated_known_bug in the summary.
//  2. Fixed (commit "rundir: bound the read itself by max_file_bytes"):
//     max_file_bytes was checked against the file's size when it was opened
//     (internal/rundir/read.go, ReadFile), so a file that grew past the
//     limit during the read (one big write(2), its mtime set once) was read
//     whole and accepted, and its content published: here the oversized
//     fault's counters (+10^12), until the file changed. Counted as
//     wrong_values_oversized_file (and the decrease after it). The race
//     needed the scrape to open the file during that write: about one
//     oversized fault in 70 in the 1h soak.
//
// Both fail the test with SOAK_STRICT=1, which `make soak` and `make test`
// set, as regression checks; with SOAK_STRICT=0 they are logged. Every
// other false reset, wrong value or repeated log line always fails.
const knownBug = "run-dir state forgotten; max_file_bytes checked at open only (both fixed)"

// maxFileBytes is the soak's max_file_bytes: above the 10 000-QP file (about
// 3.5 MiB), below the oversized fault's file.
const maxFileBytes = 8 << 20

const override = `receivers:
  ernic:
    collection_interval: 1s
    max_file_bytes: %d
    metrics:
      ernic.qp.wqes.by_opcode:
        enabled: true
processors:
  batch:
    timeout: 100ms
service:
  telemetry:
    logs:
      encoding: json
      output_paths: [stdout]
      error_output_paths: [stdout]
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
`

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// ---------------------------------------------------------------------------
// Resource monitor.

type resSample struct {
	at      time.Time
	rssKiB  int64
	threads int
	fds     int
}

type monitor struct {
	mu      sync.Mutex
	samples []resSample
	heap    []float64 // otelcol_process_runtime_heap_alloc_bytes every 10s
}

func procStatus(pid int) (rssKiB int64, threads int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rssKiB, _ = strconv.ParseInt(f[1], 10, 64)
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		}
	}
	return rssKiB, threads, nil
}

func (m *monitor) run(ctx context.Context, pid, telemetryPort int) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rss, threads, err := procStatus(pid)
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		m.mu.Lock()
		m.samples = append(m.samples, resSample{time.Now(), rss, threads, len(fds)})
		m.mu.Unlock()
		if i%10 == 0 {
			if v, ok := telemetryValue(ctx, telemetryPort, "otelcol_process_runtime_heap_alloc_bytes"); ok {
				m.mu.Lock()
				m.heap = append(m.heap, v)
				m.mu.Unlock()
			}
		}
	}
}

// telemetryValue reads one gauge of the collector's own metrics.
func telemetryValue(ctx context.Context, port int, name string) (float64, bool) {
	mfs, err := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0, false
	}
	mf, ok := mfs[name]
	if !ok || len(mf.GetMetric()) == 0 {
		return 0, false
	}
	m := mf.GetMetric()[0]
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// telemetryLosses sums, per family, the collector's own counters of
// refused, failed or dropped points (memory_limiter refusals, send failures).
func telemetryLosses(ctx context.Context, port int) map[string]float64 {
	out := map[string]float64{}
	mfs, err := harness.Scrape(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return out
	}
	for name, mf := range mfs {
		if !strings.Contains(name, "refused") && !strings.Contains(name, "failed") && !strings.Contains(name, "dropped") {
			continue
		}
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				out[name] += c.GetValue()
			}
		}
	}
	return out
}

// goroutineCounts parses the GODEBUG=schedtrace=...,scheddetail=1 output:
// per SCHED block, the goroutines that are not dead.
func goroutineCounts(stderr string) []int {
	var out []int
	n := -1
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasPrefix(line, "SCHED "):
			if n >= 0 {
				out = append(out, n)
			}
			n = 0
		case n >= 0 && strings.HasPrefix(line, "  G"):
			i := strings.Index(line, ": status=")
			if i < 0 {
				continue
			}
			st := line[i+len(": status="):]
			if j := strings.IndexAny(st, "( "); j >= 0 {
				st = st[:j]
			}
			if s, err := strconv.Atoi(st); err == nil && s != 6 && s != 0 { // _Gdead, _Gidle
				n++
			}
		}
	}
	if n >= 0 {
		out = append(out, n)
	}
	return out
}

// ---------------------------------------------------------------------------
// The simulator's log, as an index of written values.

// seriesKey names one sampled series of one instance: its family and the
// qp, counter or opcode label.
type seriesKey struct {
	id     int
	family string
	qp     string
	label  string // counter (LIF) or opcode
}

func (k seriesKey) String() string {
	s := fmt.Sprintf("%s{ernic_id=%q", k.family, strconv.Itoa(k.id))
	if k.qp != "" {
		s += fmt.Sprintf(",qp=%q", k.qp)
	}
	if k.label != "" {
		s += fmt.Sprintf(",label=%q", k.label)
	}
	return s + "}"
}

// origin is where a value was written: the process (gen), the QP epoch,
// and the first time it was in a complete file.
type origin struct {
	proc  int64 // gen<<20 | epoch
	first time.Time
}

// writeIndex maps each sampled series to its written values.
type writeIndex map[seriesKey]map[float64][]origin

func (ix writeIndex) add(k seriesKey, v uint64, proc int64, at time.Time) {
	m := ix[k]
	if m == nil {
		m = map[float64][]origin{}
		ix[k] = m
	}
	f := float64(v)
	for i, o := range m[f] {
		if o.proc == proc {
			if at.Before(o.first) {
				m[f][i].first = at
			}
			return
		}
	}
	m[f] = append(m[f], origin{proc, at})
}

// deviceFamilies maps the device families to their file values.
var deviceFamilies = map[string]func(d map[string]uint64) uint64{
	"ernic_commands_total":            func(d map[string]uint64) uint64 { return d["commands"] },
	"ernic_interrupts_total":          func(d map[string]uint64) uint64 { return d["interrupts"] },
	"ernic_flr_reset_total":           func(d map[string]uint64) uint64 { return d["reset_count"] },
	"ernic_mmio_reads_total":          func(d map[string]uint64) uint64 { return d["mmio_reads_total"] },
	"ernic_mmio_writes_total":         func(d map[string]uint64) uint64 { return d["mmio_writes_total"] },
	"ernic_rdma_bytes_sent_total":     func(d map[string]uint64) uint64 { return d["total_bytes_sent"] },
	"ernic_rdma_bytes_received_total": func(d map[string]uint64) uint64 { return d["total_bytes_received"] },
	"ernic_rdma_bytes_read_total":     func(d map[string]uint64) uint64 { return d["total_bytes_rdma_read"] },
	"ernic_rdma_bytes_write_total":    func(d map[string]uint64) uint64 { return d["total_bytes_rdma_write"] },
	"ernic_ip_bytes_tx_total":         func(d map[string]uint64) uint64 { return d["total_ip_bytes_tx"] },
	"ernic_ip_bytes_rx_total":         func(d map[string]uint64) uint64 { return d["total_ip_bytes_rx"] },
	"ernic_rdma_bytes_total": func(d map[string]uint64) uint64 {
		return d["total_bytes_sent"] + d["total_bytes_received"] + d["total_bytes_rdma_read"] + d["total_bytes_rdma_write"]
	},
	"ernic_ip_bytes_total": func(d map[string]uint64) uint64 { return d["total_ip_bytes_tx"] + d["total_ip_bytes_rx"] },
}

// qpFamilies maps the QP families to their file keys.
var qpFamilies = map[string]string{
	"ernic_qp_bytes_sent_total":       "bytes_sent",
	"ernic_qp_bytes_received_total":   "bytes_received",
	"ernic_qp_bytes_rdma_read_total":  "bytes_rdma_read",
	"ernic_qp_bytes_rdma_write_total": "bytes_rdma_write",
	"ernic_qp_wqes_processed_total":   "wqes_processed",
	"ernic_qp_cqes_posted_total":      "cqes_posted",
	"ernic_qp_doorbell_send_total":    "doorbell_send",
	"ernic_qp_doorbell_recv_total":    "doorbell_recv",
}

const (
	famWrites   = "ernic_stats_writes_total"
	famLIF      = "ernic_lif_counter_total"
	famOpcode   = "ernic_qp_wqes_by_opcode_total"
	famQPCount  = "ernic_qp_count"
	qpSampledRE = `[0-9]|[12][0-9]|3[01]` // handles below sim.ChaosSampleQPBelow
)

// counterFamilies are every counter family of the contract.
func counterFamilies() []string {
	var out []string
	for f := range deviceFamilies {
		out = append(out, f)
	}
	for f := range qpFamilies {
		out = append(out, f)
	}
	out = append(out, famWrites, famLIF, famOpcode)
	sort.Strings(out)
	return out
}

// chaosRun is the simulator's log, digested.
type chaosRun struct {
	index    writeIndex
	writes   map[int]int            // complete writes by instance
	restarts map[int]int            // real restarts by instance
	causes   map[string]int         // real restarts by cause
	qpReuse  map[int]map[string]int // qp-reuse drops by instance and handle
	faults   map[string]int         // by kind
	skipped  map[string]string      // kind -> why
	details  map[string][]string    // a few details by kind
	ids      []int
	// recreates are the times the run directory was removed.
	recreates []time.Time
	// drops are the times of the qp-reuse faults, by instance.
	drops map[int][]time.Time
	// restartTimes are the real restarts' times, by instance.
	restartTimes map[int][]time.Time
	// oversized are the intervals of the oversized faults, by instance.
	oversized map[int][][2]time.Time
}

// inOversized reports whether instance id's stats file was oversized at t
// (or up to 3s before).
func (r *chaosRun) inOversized(id int, t time.Time) bool {
	for _, w := range r.oversized[id] {
		if !t.Before(w[0].Add(-time.Second)) && !t.After(w[1].Add(3*time.Second)) {
			return true
		}
	}
	return false
}

// restartedBetween reports whether instance id had a real restart between
// a and b.
func (r *chaosRun) restartedBetween(id int, a, b time.Time) bool {
	for _, t := range r.restartTimes[id] {
		if !t.Before(a.Add(-2*time.Second)) && !t.After(b.Add(2*time.Second)) {
			return true
		}
	}
	return false
}

// isBogus reports whether v is a written value plus k*10^12 (k = 1..4): the
// content of the oversized or symlinked file (sim.ChaosOptions), where sums
// of two or four counters carry the offset that many times.
func isBogus(written map[float64][]origin, v float64) bool {
	for k := 1.0; k <= 4; k++ {
		if _, ok := written[v-k*1e12]; ok {
			return true
		}
	}
	return false
}

// acrossDrop reports whether a QP of instance id dropped its counters
// (qp-reuse) between a and b.
func (r *chaosRun) acrossDrop(id int, a, b time.Time) bool {
	for _, t := range r.drops[id] {
		if !t.Before(a.Add(-2*time.Second)) && !t.After(b) {
			return true
		}
	}
	return false
}

// acrossRecreate reports whether the run directory was removed between a
// and b (a sample or log line just before the removal included).
func (r *chaosRun) acrossRecreate(a, b time.Time) bool {
	for _, t := range r.recreates {
		if !t.Before(a.Add(-2*time.Second)) && !t.After(b) {
			return true
		}
	}
	return false
}

func readChaosLog(t *testing.T, path string) *chaosRun {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := &chaosRun{
		index: writeIndex{}, writes: map[int]int{}, restarts: map[int]int{}, causes: map[string]int{},
		qpReuse: map[int]map[string]int{}, drops: map[int][]time.Time{}, restartTimes: map[int][]time.Time{},
		oversized: map[int][][2]time.Time{}, faults: map[string]int{}, skipped: map[string]string{}, details: map[string][]string{},
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec sim.ChaosRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("chaos log: %v: %.200s", err, sc.Text())
		}
		switch rec.Event {
		case "write":
			if !slices.Contains(r.ids, rec.ID) {
				r.ids = append(r.ids, rec.ID)
			}
			r.writes[rec.ID]++
			proc := int64(rec.Gen) << 20
			for fam, get := range deviceFamilies {
				r.index.add(seriesKey{id: rec.ID, family: fam}, get(rec.Device), proc, rec.Time)
			}
			r.index.add(seriesKey{id: rec.ID, family: famWrites}, rec.WriteCount, proc, rec.Time)
			r.index.add(seriesKey{id: rec.ID, family: famQPCount}, uint64(rec.QPCount), proc, rec.Time)
			for name, v := range rec.LIF {
				r.index.add(seriesKey{id: rec.ID, family: famLIF, label: name}, v, proc, rec.Time)
			}
			for h, q := range rec.QPs {
				qp := strconv.FormatUint(uint64(h), 10)
				qproc := proc | int64(q.Epoch)
				for fam, key := range qpFamilies {
					r.index.add(seriesKey{id: rec.ID, family: fam, qp: qp}, q.Counters[key], qproc, rec.Time)
				}
				for op, v := range q.Opcodes {
					r.index.add(seriesKey{id: rec.ID, family: famOpcode, qp: qp, label: op}, v, qproc, rec.Time)
				}
			}
		case "restart":
			r.restarts[rec.ID]++
			r.causes[rec.Kind]++
			r.restartTimes[rec.ID] = append(r.restartTimes[rec.ID], rec.Time)
		case "fault-end":
			if rec.Kind == sim.ChaosOversized {
				if w := r.oversized[rec.ID]; len(w) > 0 && w[len(w)-1][1].IsZero() {
					w[len(w)-1][1] = rec.Time
				}
			}
		case "fault":
			r.faults[rec.Kind]++
			if len(r.details[rec.Kind]) < 3 {
				r.details[rec.Kind] = append(r.details[rec.Kind], fmt.Sprintf("id %d: %s", rec.ID, rec.Detail))
			}
			if rec.Kind == sim.ChaosRunDirRecreate {
				r.recreates = append(r.recreates, rec.Time)
			}
			if rec.Kind == sim.ChaosOversized {
				r.oversized[rec.ID] = append(r.oversized[rec.ID], [2]time.Time{rec.Time, {}})
			}
			if rec.Kind == sim.ChaosQPReuse {
				if r.qpReuse[rec.ID] == nil {
					r.qpReuse[rec.ID] = map[string]int{}
				}
				r.qpReuse[rec.ID][strconv.FormatUint(uint64(rec.QP), 10)]++
				r.drops[rec.ID] = append(r.drops[rec.ID], rec.Time)
			}
		case "skip":
			r.skipped[rec.Kind] = rec.Detail
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, ws := range r.oversized {
		for i := range ws {
			if ws[i][1].IsZero() {
				ws[i][1] = time.Now()
			}
		}
	}
	sort.Ints(r.ids)
	return r
}

// ---------------------------------------------------------------------------
// The collector's log.

type logLine struct {
	Level   string    `json:"level"`
	TS      time.Time `json:"ts"`
	Msg     string    `json:"msg"`
	Error   string    `json:"error"`
	ErnicID string    `json:"ernic.id"`
	Counter string    `json:"counter"`
	PID     int       `json:"pid"`
}

var (
	reInstance  = regexp.MustCompile(`^instance (\d+): `)
	reStatsFile = regexp.MustCompile(`/(\d+)\.stats: \d+ unusable lines`)
	reDigits    = regexp.MustCompile(`\d+`)
)

// faultKey is the receiver's fault key (kind plus instance or file) of one
// reported error, from its message (receiver/ernicreceiver/scraper.go).
func faultKey(msg string) string {
	switch {
	case strings.HasPrefix(msg, "run directory ") && strings.Contains(msg, "nothing to publish"):
		return "run-dir"
	case strings.Contains(msg, "instances.json does not exist yet"):
		return "manifest-missing"
	case strings.Contains(msg, "instances.json") && strings.Contains(msg, "unusable entries"):
		return "manifest-entries"
	case strings.Contains(msg, "instances.json"):
		return "manifest"
	}
	if m := reStatsFile.FindStringSubmatch(msg); m != nil && !reInstance.MatchString(msg) {
		return "stats-lines:" + m[1]
	}
	if m := reInstance.FindStringSubmatch(msg); m != nil {
		id := m[1]
		switch {
		case strings.Contains(msg, "publishing the last complete read") || strings.Contains(msg, "no device metrics this scrape"):
			kind := "unreadable"
			switch {
			case strings.Contains(msg, "lost QP blocks"):
				kind = "shrunk"
			case strings.Contains(msg, "incomplete file") || strings.Contains(msg, "changed while it was read"):
				kind = "torn"
			}
			return "stats-" + kind + ":" + id
		case strings.Contains(msg, "vm.launched_at"):
			return "vm-launched-at:" + id
		default:
			return "proc:" + id
		}
	}
	m := msg
	if len(m) > 80 {
		m = m[:80]
	}
	return "other:" + reDigits.ReplaceAllString(m, "N")
}

type logReport struct {
	Keys        map[string]int    `json:"fault_log_lines_by_key"`
	Examples    map[string]string `json:"fault_log_example_by_key"`
	TooOften    []string          `json:"fault_keys_logged_too_often"`
	Overflow    map[string]int    `json:"overflow_warnings_by_instance_counter_pid"`
	OverflowDup []string          `json:"overflow_warnings_repeated"`
	// OverflowKnown are repeats across a removal of the run directory
	// (the receiver forgets its instances then) or across a counter drop
	// of the same process (qp-reuse): see knownBug.
	OverflowKnown []string       `json:"overflow_warnings_repeated_known_bug"`
	Other         map[string]int `json:"other_warn_error_lines_by_msg"`
	Unparsed      int            `json:"unparsed_log_lines"`
	times         map[string][]time.Time
}

func analyseLog(out string, run *chaosRun) *logReport {
	r := &logReport{Keys: map[string]int{}, Examples: map[string]string{}, Overflow: map[string]int{},
		Other: map[string]int{}, times: map[string][]time.Time{}}
	overflowTimes := map[string][]time.Time{}
	overflowID := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			r.Unparsed++
			continue
		}
		switch {
		case l.Msg == "Error scraping metrics" || strings.Contains(l.Msg, "scrap") && l.Error != "":
			for _, e := range strings.Split(l.Error, "\n") {
				if e == "" {
					continue
				}
				k := faultKey(e)
				r.Keys[k]++
				r.times[k] = append(r.times[k], l.TS)
				if _, ok := r.Examples[k]; !ok {
					r.Examples[k] = e
				}
			}
		case strings.HasPrefix(l.Msg, "Counter above 2^63-1"):
			k := fmt.Sprintf("%s/%s/%d", l.ErnicID, l.Counter, l.PID)
			r.Overflow[k]++
			overflowTimes[k] = append(overflowTimes[k], l.TS)
			overflowID[k], _ = strconv.Atoi(l.ErnicID)
		case l.Level == "warn" || l.Level == "error":
			r.Other[l.Msg]++
		}
	}
	for k, ts := range r.times {
		for i := 1; i < len(ts); i++ {
			if gap := ts[i].Sub(ts[i-1]); gap < faultInterval-time.Second {
				r.TooOften = append(r.TooOften, fmt.Sprintf("%s: logged at %s and again %v later", k, ts[i-1].Format(time.TimeOnly), gap.Round(time.Millisecond)))
			}
		}
	}
	for k, ts := range overflowTimes {
		for i := 1; i < len(ts); i++ {
			line := fmt.Sprintf("%s: logged at %s and again at %s", k, ts[i-1].Format(time.TimeOnly), ts[i].Format(time.TimeOnly))
			switch {
			case run.acrossRecreate(ts[i-1], ts[i]):
				r.OverflowKnown = append(r.OverflowKnown, line+" (the run directory was removed in between)")
			case run.acrossDrop(overflowID[k], ts[i-1], ts[i]):
				r.OverflowKnown = append(r.OverflowKnown, line+" (a QP of the same process dropped its counters in between: qp-reuse)")
			default:
				r.OverflowDup = append(r.OverflowDup, line)
			}
		}
	}
	sort.Strings(r.TooOften)
	sort.Strings(r.OverflowDup)
	sort.Strings(r.OverflowKnown)
	return r
}

// ---------------------------------------------------------------------------
// The test.

type summary struct {
	Duration       string            `json:"soak_duration"`
	Window         string            `json:"window_checked"`
	Instances      []int             `json:"instances"`
	FaultsInjected map[string]int    `json:"faults_injected_by_kind"`
	Skipped        map[string]string `json:"kinds_skipped"`
	NotInjected    []string          `json:"kinds_not_injected"`
	RealRestarts   map[int]int       `json:"real_restarts_by_instance"`
	RestartCauses  map[string]int    `json:"real_restarts_by_cause"`
	CompleteWrites map[int]int       `json:"complete_writes_by_instance"`
	CounterSeries  int               `json:"counter_series"`
	ResetsTotal    float64           `json:"resets_total"`
	ResetsAllowed  float64           `json:"resets_allowed_total"`
	FalseResets    int               `json:"false_resets"`
	FalseResetList []string          `json:"false_resets_list,omitempty"`
	// KnownBug counts the false resets (resets() beyond the allowed, and
	// decreases of sampled series within one process) that straddle a
	// removal of the run directory: see knownBug.
	KnownBug        int             `json:"false_resets_after_run_dir_recreate"`
	KnownBugList    []string        `json:"false_resets_after_run_dir_recreate_list,omitempty"`
	WriteResets     map[int]float64 `json:"resets_of_stats_writes_total_by_instance"`
	MMIOResets      map[int]float64 `json:"resets_of_mmio_reads_total_by_instance"`
	SampledSeries   int             `json:"sampled_series"`
	SamplesChecked  int             `json:"raw_samples_checked"`
	WrongValues     int             `json:"wrong_values"`
	WrongList       []string        `json:"wrong_values_list,omitempty"`
	SampleDecreases int             `json:"raw_sample_decreases"`
	FalseDecreases  int             `json:"raw_sample_false_decreases"`
	KnownDecreases  int             `json:"raw_sample_false_decreases_after_run_dir_recreate"`
	// KnownWrong are wrong values that are the oversized file's content,
	// published during an oversized fault (knownBug).
	KnownWrong     int      `json:"wrong_values_oversized_file"`
	KnownWrongList []string `json:"wrong_values_oversized_file_list,omitempty"`
	// Unexpected are series whose role label is neither manager nor
	// worker: a racing manifest rewrite that left valid JSON with spliced
	// values (reported, not checked).
	Unexpected      []string  `json:"series_with_unexpected_role"`
	CollectorExited bool      `json:"collector_exited_during_soak"`
	PeakRSSMiB      float64   `json:"peak_rss_mib"`
	RSSBoundMiB     int       `json:"rss_bound_mib"`
	RSSByQuarterMiB []float64 `json:"peak_rss_by_quarter_mib"`
	Threads         [2]int    `json:"threads_min_max"`
	ThreadsQuarters []int     `json:"peak_threads_by_quarter"`
	FDs             [2]int    `json:"open_fds_min_max"`
	FDsQuarters     []int     `json:"peak_fds_by_quarter"`
	Goroutines      []int     `json:"goroutines_every_10s"`
	HeapMiB         []float64 `json:"heap_alloc_mib_every_10s"`
	// Losses are the collector's own refused/failed/dropped point counters
	// at the end (reported, not checked).
	Losses map[string]float64 `json:"collector_refused_failed_dropped"`
	Log    *logReport         `json:"collector_log"`
}

func TestSoak(t *testing.T) {
	duration := envDuration(t, "SOAK_DURATION", 90*time.Second)
	every := envDuration(t, "SOAK_CHAOS_EVERY", 3*time.Second)
	rssBound := envInt(t, "SOAK_MAX_RSS_MIB", 384)
	strict := os.Getenv("SOAK_STRICT") == "1"
	// knownBugf reports a recurrence of a receiver bug this soak found (see
	// knownBug): an error with SOAK_STRICT=1 (`make soak`, `make test`), a
	// log line otherwise.
	knownBugf := func(format string, args ...any) {
		if strict {
			t.Errorf("receiver bug (knownBug: %s): %s", knownBug, fmt.Sprintf(format, args...))
		} else {
			t.Logf("KNOWN RECEIVER BUG (knownBug: %s; an error with SOAK_STRICT=1): %s", knownBug, fmt.Sprintf(format, args...))
		}
	}
	hugeQPs := envInt(t, "SOAK_HUGE_QPS", 10000)
	seed := int64(envInt(t, "SOAK_SEED", 1))
	bin := harness.CollectorBinary(t)

	dir := t.TempDir()
	if d := os.Getenv("SOAK_DIR"); d != "" {
		dir = filepath.Join(d, time.Now().Format("20060102-150405"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runDir := filepath.Join(dir, "run")
	prom := harness.StartRemoteWritePrometheus(t, dir, "2d")

	// The simulator, logging every complete write from its first one.
	chaosLogPath := filepath.Join(dir, "chaos.jsonl")
	chaosLog, err := os.Create(chaosLogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer chaosLog.Close()
	var simText harness.LockedBuffer
	s, err := sim.New(sim.Options{RunDir: runDir, Instances: 5, QPs: 8, Interval: time.Second, LIF: true, Seed: seed, Log: &simText})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewChaos(s, sim.ChaosOptions{
		Events: chaosLog, Every: every, TornEvery: time.Second,
		HoldMin: 2 * time.Second, HoldMax: 4 * time.Second, RestartGap: 10 * time.Second,
		MaxFileBytes: maxFileBytes, HugeQPs: hugeQPs, Seed: seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(); _ = s.Stop() }()

	// The collector: the shipped remote-write config plus the soak's
	// overrides, goroutines traced every 10s on stderr.
	telemetryPort := harness.FreePort(t)
	overridePath := filepath.Join(dir, "soak.yaml")
	if err := os.WriteFile(overridePath, []byte(fmt.Sprintf(override, maxFileBytes, telemetryPort)), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// stdout: the JSON log; stderr: the runtime's scheduler traces.
	col := harness.Start(t, harness.Launch{
		Name: "collector", Path: bin,
		Args: harness.ConfigArgs(filepath.Join(harness.RepoRoot(t), "config", "prometheus-remote-write.yaml"), overridePath),
		Env: []string{
			"ERNIC_RUN_DIR=" + runDir,
			"ERNIC_REMOTE_WRITE_URL=" + prom.WriteURL(),
			"ERNIC_STATE_DIR=" + filepath.Join(dir, "state"),
			"GODEBUG=schedtrace=10000,scheddetail=1",
		},
		DropEnv: []string{"GODEBUG="},
		Stderr:  &harness.LockedBuffer{},
	})
	defer func() {
		col.Stop(15 * time.Second)
		_ = os.WriteFile(filepath.Join(dir, "collector.log"), []byte(col.Log.String()), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "collector-sched.log"), []byte(col.Stderr.String()), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "sim.log"), []byte(simText.String()), 0o644)
	}()
	mon := &monitor{}
	monCtx, monStop := context.WithCancel(ctx)
	defer monStop()
	go mon.run(monCtx, col.Pid(), telemetryPort)

	// Data flows: a worker's write count is in Prometheus.
	deadline := time.Now().Add(60 * time.Second)
	for {
		v, _, err := prom.Query(ctx, `ernic_stats_writes_total{ernic_id="2"}`, time.Now())
		if err == nil && len(v) == 1 {
			break
		}
		if !col.Running() || time.Now().After(deadline) {
			t.Fatalf("no data in Prometheus within 60s (collector running: %v, last error %v):\n%s", col.Running(), err, harness.Tail(col.Log.String(), 4000))
		}
		time.Sleep(500 * time.Millisecond)
	}

	t.Logf("soak: %v of chaos, artefacts in %s", duration, dir)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	chaosEnd := time.Now().Add(duration)
	for time.Now().Before(chaosEnd) && col.Running() {
		time.Sleep(time.Second)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	// The recovered processes are seen, and the queue sent.
	for i := 0; i < 8 && col.Running(); i++ {
		time.Sleep(time.Second)
	}
	end := time.Now()
	exited := !col.Running()
	monStop()
	losses := telemetryLosses(ctx, telemetryPort)

	sum := &summary{Duration: duration.String(), RSSBoundMiB: rssBound, Losses: losses}
	sum.CollectorExited = exited
	if exited {
		t.Errorf("the collector exited during the soak (%v):\n%s", col.Err(), harness.Tail(col.Log.String(), 8000))
	}
	counts := c.Counts()
	run := readChaosLog(t, chaosLogPath)
	sum.Instances = run.ids
	sum.FaultsInjected = run.faults
	sum.Skipped = run.skipped
	sum.RealRestarts = run.restarts
	sum.RestartCauses = run.causes
	sum.CompleteWrites = run.writes
	for _, k := range append(slices.Clone(sim.ChaosKinds), sim.ChaosTornKinds...) {
		if k != sim.ChaosRestart && run.faults[k] == 0 && run.skipped[k] == "" {
			sum.NotInjected = append(sum.NotInjected, k)
		}
	}
	if counts.Writes == 0 || len(run.writes) == 0 {
		t.Fatal("the simulator logged no complete write")
	}
	if duration >= time.Minute && len(sum.NotInjected) > 0 {
		t.Errorf("fault kinds never injected in %v: %v", duration, sum.NotInjected)
	}

	window := end.Sub(start).Truncate(time.Second) + 2*time.Second
	sum.Window = window.String()
	rng := fmt.Sprintf("%ds", int(window.Seconds()))

	// 1. resets() of every counter series, against the real restarts.
	sum.WriteResets, sum.MMIOResets = map[int]float64{}, map[int]float64{}
	for _, fam := range counterFamilies() {
		v, _, err := prom.Query(ctx, fmt.Sprintf("resets(%s[%s])", fam, rng), end)
		if err != nil {
			t.Fatal(err)
		}
		for _, smp := range v {
			id, _ := strconv.Atoi(string(smp.Metric["ernic_id"]))
			qp := string(smp.Metric["qp"])
			got := float64(smp.Value)
			allowed := float64(run.restarts[id])
			if qp != "" {
				allowed += float64(run.qpReuse[id][qp])
			}
			sum.CounterSeries++
			sum.ResetsTotal += got
			sum.ResetsAllowed += allowed
			if got > allowed {
				// More decreases than restarts and drops: attribute each.
				known, bad := attributeDecreases(t, ctx, prom, run, smp.Metric, fam, rng, end)
				line := fmt.Sprintf("%s%s: resets %v, real restarts %d, qp-reuse drops %d; decreases after the oversized file or across a run-dir removal %d, unexplained %d",
					fam, smp.Metric, got, run.restarts[id], run.qpReuse[id][qp], known, bad)
				if known > 0 {
					sum.KnownBug += known
					sum.KnownBugList = append(sum.KnownBugList, line)
				}
				if bad > 0 {
					sum.FalseResets += bad
					sum.FalseResetList = append(sum.FalseResetList, line)
				}
			}
			role := string(smp.Metric["role"])
			if want := "worker"; role != want && (id != 1 || role != "manager") {
				if fam == famWrites {
					sum.Unexpected = append(sum.Unexpected, fmt.Sprintf("%s%s", fam, smp.Metric))
				}
				continue
			}
			switch fam {
			case famWrites:
				sum.WriteResets[id] = got
			case "ernic_mmio_reads_total":
				sum.MMIOResets[id] = got
			}
		}
	}
	for _, id := range run.ids {
		if id == 1 {
			continue // the manager: its file is written at startup and shutdown only
		}
		for fam, got := range map[string]map[int]float64{famWrites: sum.WriteResets, "ernic_mmio_reads_total": sum.MMIOResets} {
			if got[id] != float64(run.restarts[id]) {
				t.Errorf("resets(%s{ernic_id=\"%d\"}[%s]) = %v, want the %d real restarts of instance %d", fam, id, rng, got[id], run.restarts[id], id)
			}
		}
	}
	if sum.FalseResets > 0 {
		t.Errorf("%d false resets:\n  %s", sum.FalseResets, strings.Join(first(sum.FalseResetList, 40), "\n  "))
	}
	if sum.KnownBug > 0 {
		knownBugf("%d false resets across a removal of the run directory:\n  %s", sum.KnownBug, strings.Join(first(sum.KnownBugList, 40), "\n  "))
	}

	// 2. Raw samples of the sampled series against the complete writes.
	type query struct{ fam, sel string }
	var queries []query
	for fam := range deviceFamilies {
		queries = append(queries, query{fam, ""})
	}
	queries = append(queries, query{famWrites, ""}, query{famQPCount, ""},
		query{famLIF, fmt.Sprintf(`,counter=~"%s"`, strings.Join(sim.ChaosSampleLIF, "|"))},
		query{famOpcode, fmt.Sprintf(`,qp=~"%s"`, qpSampledRE)})
	for fam := range qpFamilies {
		queries = append(queries, query{fam, fmt.Sprintf(`,qp=~"%s"`, qpSampledRE)})
	}
	for _, id := range run.ids {
		for _, q := range queries {
			_, m, err := prom.Query(ctx, fmt.Sprintf(`%s{ernic_id="%d"%s}[%s]`, q.fam, id, q.sel, rng), end)
			if err != nil {
				t.Fatal(err)
			}
			for _, ss := range m {
				k := seriesKey{id: id, family: q.fam, qp: string(ss.Metric["qp"])}
				switch q.fam {
				case famLIF:
					k.label = string(ss.Metric["counter"])
				case famOpcode:
					k.label = string(ss.Metric["opcode"])
				}
				checkSeries(sum, run, k, ss.Values)
			}
		}
	}
	if sum.KnownWrong > 0 {
		knownBugf("%d raw samples are the content of a file over max_file_bytes:\n  %s", sum.KnownWrong, strings.Join(first(sum.KnownWrongList, 20), "\n  "))
	}
	if len(sum.Unexpected) > 0 {
		t.Logf("series with a role neither manager nor worker (a racing manifest rewrite left valid JSON with spliced values): %v", sum.Unexpected)
	}
	if sum.WrongValues > 0 {
		t.Errorf("%d raw samples are no value the simulator wrote completely:\n  %s", sum.WrongValues, strings.Join(first(sum.WrongList, 40), "\n  "))
	}
	if sum.KnownDecreases > 0 {
		knownBugf("%d decreases between raw samples within one server process, across a removal of the run directory (false_resets_after_run_dir_recreate_list)", sum.KnownDecreases)
	}
	if sum.FalseDecreases > 0 {
		t.Errorf("%d decreases between raw samples within one server process (see false_resets_list)", sum.FalseDecreases)
	}
	// Not vacuous: every worker's write count has samples over most of the
	// window.
	for _, id := range run.ids {
		_, m, err := prom.Query(ctx, fmt.Sprintf(`%s{ernic_id="%d"}[%s]`, famWrites, id, rng), end)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ss := range m {
			n += len(ss.Values)
		}
		if id != 1 && id <= 5 && float64(n) < 0.5*window.Seconds() {
			t.Errorf("instance %d: only %d samples of %s in %v", id, n, famWrites, window)
		}
	}

	// 3. The collector's resources.
	mon.mu.Lock()
	samples := slices.Clone(mon.samples)
	heap := slices.Clone(mon.heap)
	mon.mu.Unlock()
	sum.Goroutines = goroutineCounts(col.Stderr.String())
	for _, h := range heap {
		sum.HeapMiB = append(sum.HeapMiB, math.Round(h/(1<<20)*10)/10)
	}
	if len(samples) == 0 {
		t.Fatal("no resource samples of the collector")
	}
	sum.Threads = [2]int{math.MaxInt, 0}
	sum.FDs = [2]int{math.MaxInt, 0}
	var peak int64
	for _, r := range samples {
		peak = max(peak, r.rssKiB)
		sum.Threads = [2]int{min(sum.Threads[0], r.threads), max(sum.Threads[1], r.threads)}
		sum.FDs = [2]int{min(sum.FDs[0], r.fds), max(sum.FDs[1], r.fds)}
	}
	sum.PeakRSSMiB = math.Round(float64(peak)/1024*10) / 10
	q := len(samples) / 4
	for i := range 4 {
		part := samples[i*q : max(i*q+1, (i+1)*q)]
		if i == 3 {
			part = samples[i*q:]
		}
		var r int64
		var th, fd int
		for _, x := range part {
			r, th, fd = max(r, x.rssKiB), max(th, x.threads), max(fd, x.fds)
		}
		sum.RSSByQuarterMiB = append(sum.RSSByQuarterMiB, math.Round(float64(r)/1024*10)/10)
		sum.ThreadsQuarters = append(sum.ThreadsQuarters, th)
		sum.FDsQuarters = append(sum.FDsQuarters, fd)
	}
	if sum.PeakRSSMiB > float64(rssBound) {
		t.Errorf("peak RSS %.1f MiB, above the bound of %d MiB", sum.PeakRSSMiB, rssBound)
	}
	// Growth: the last quarter against the second (the first is start-up).
	if th := sum.ThreadsQuarters; th[3] > th[1]+4 {
		t.Errorf("threads grew: peak by quarter %v", th)
	}
	if fd := sum.FDsQuarters; fd[3] > fd[1]+8 {
		t.Errorf("open files grew: peak by quarter %v", fd)
	}
	if duration >= 10*time.Minute {
		if r := sum.RSSByQuarterMiB; r[3] > r[1]*1.25+32 {
			t.Errorf("RSS grew: peak by quarter %v MiB", r)
		}
	}
	if g := sum.Goroutines; len(g) >= 4 {
		mid, last := medianInts(g[len(g)/4:len(g)/2]), medianInts(g[len(g)*3/4:])
		if last > mid*1.2+10 {
			t.Errorf("goroutines grew: median %v in the second quarter, %v in the last: %v", mid, last, g)
		}
	} else {
		t.Errorf("too few goroutine counts from GODEBUG=schedtrace: %v", g)
	}

	// 4. The collector's log: each fault key at most once per interval.
	sum.Log = analyseLog(col.Log.String(), run)
	if len(sum.Log.TooOften) > 0 {
		t.Errorf("faults logged more often than once per %v:\n  %s", faultInterval, strings.Join(first(sum.Log.TooOften, 40), "\n  "))
	}
	if len(sum.Log.OverflowDup) > 0 {
		t.Errorf("counters above 2^63-1 logged more than once per process:\n  %s", strings.Join(sum.Log.OverflowDup, "\n  "))
	}
	if len(sum.Log.OverflowKnown) > 0 {
		knownBugf("counters above 2^63-1 logged again for the same process:\n  %s", strings.Join(sum.Log.OverflowKnown, "\n  "))
	}
	if strings.Contains(col.Log.String()+col.Stderr.String(), "panic:") {
		t.Errorf("the collector panicked:\n%s", harness.Tail(col.Log.String(), 8000))
	}

	// The collector stops cleanly.
	if col.Stop(15 * time.Second) {
		t.Errorf("the collector did not stop within 15s of SIGTERM")
	} else if col.Err() != nil && !exited {
		t.Errorf("the collector exited with %v after SIGTERM", col.Err())
	}

	b, _ := json.MarshalIndent(sum, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644)
	t.Logf("soak summary (%s):\n%s", filepath.Join(dir, "summary.json"), b)
	for k, d := range run.details {
		t.Logf("fault %s, e.g. %s", k, strings.Join(d, " | "))
	}
}

// attributeDecreases goes through the decreases between the raw samples of
// the series m of family fam: one with a real restart of its instance (or a
// qp-reuse of its QP) in between is right; one from the oversized file's
// content, or across a removal of the run directory, is a known receiver
// bug (knownBug); the rest are false resets.
func attributeDecreases(t *testing.T, ctx context.Context, prom *harness.Prometheus, run *chaosRun, m model.Metric, fam, rng string, end time.Time) (known, bad int) {
	t.Helper()
	var sel []string
	for k, v := range m {
		sel = append(sel, fmt.Sprintf("%s=%q", k, string(v)))
	}
	sort.Strings(sel)
	_, mat, err := prom.Query(ctx, fmt.Sprintf("%s{%s}[%s]", fam, strings.Join(sel, ","), rng), end)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.Atoi(string(m["ernic_id"]))
	qp := string(m["qp"])
	for _, ss := range mat {
		for i := 1; i < len(ss.Values); i++ {
			a, b := ss.Values[i-1], ss.Values[i]
			ta, tb := a.Timestamp.Time(), b.Timestamp.Time()
			switch {
			case b.Value >= a.Value:
			case run.restartedBetween(id, ta, tb):
			case qp != "" && run.acrossDrop(id, ta, tb):
			case run.inOversized(id, ta) || run.acrossRecreate(ta, tb):
				known++
			default:
				bad++
			}
		}
	}
	return known, bad
}

// checkSeries checks the raw samples of one sampled series: each value was
// in a complete write before the sample (2s of slack: the scrape's
// timestamp is taken before the file is read), and a decrease is only from
// an earlier process or QP epoch to a later one.
func checkSeries(sum *summary, run *chaosRun, k seriesKey, values []model.SamplePair) {
	// The sample's timestamp is its scrape's start; the file is read a bit
	// later, up to seconds on a loaded machine.
	const slack = 5 * time.Second
	written := run.index[k]
	if written == nil {
		sum.WrongValues += len(values)
		sum.WrongList = append(sum.WrongList, fmt.Sprintf("%s: %d samples of a series the simulator never wrote", k, len(values)))
		return
	}
	sum.SampledSeries++
	var prevLo, prevHi int64 = -1, -1
	var prevV float64
	var prevAt time.Time
	prevKnown := false
	for i, sp := range values {
		sum.SamplesChecked++
		at := sp.Timestamp.Time()
		v := float64(sp.Value)
		lo, hi := int64(math.MaxInt64), int64(-1)
		for _, o := range written[v] {
			if !o.first.After(at.Add(slack)) {
				lo, hi = min(lo, o.proc), max(hi, o.proc)
			}
		}
		known := false
		if hi < 0 {
			line := fmt.Sprintf("%s at %s = %v: not in any complete write before then%s", k, at.Format("15:04:05.000"), v, nearby(written, v))
			if run.inOversized(k.id, at) && isBogus(written, v) {
				known = true
				sum.KnownWrong++
				if len(sum.KnownWrongList) < 200 {
					sum.KnownWrongList = append(sum.KnownWrongList, line+": the oversized file's content")
				}
			} else {
				sum.WrongValues++
				if len(sum.WrongList) < 200 {
					sum.WrongList = append(sum.WrongList, line)
				}
			}
		}
		if i > 0 && v < prevV {
			sum.SampleDecreases++
			if hi < 0 || prevLo < 0 || hi <= prevLo {
				line := fmt.Sprintf("raw %s: %v at %s -> %v at %s within one process (processes %x..%x -> %x..%x)",
					k, prevV, prevAt.Format("15:04:05.000"), v, at.Format("15:04:05.000"), prevLo, prevHi, lo, hi)
				if prevKnown || run.acrossRecreate(prevAt, at) {
					sum.KnownDecreases++
					if len(sum.KnownBugList) < 200 {
						sum.KnownBugList = append(sum.KnownBugList, line)
					}
				} else {
					sum.FalseDecreases++
					if len(sum.FalseResetList) < 200 {
						sum.FalseResetList = append(sum.FalseResetList, line)
					}
				}
			}
		}
		prevV, prevLo, prevHi, prevAt, prevKnown = v, lo, hi, at, known
	}
}

// nearby describes the written values closest to v.
func nearby(written map[float64][]origin, v float64) string {
	var below, above float64 = math.Inf(-1), math.Inf(1)
	for w := range written {
		if w < v && w > below {
			below = w
		}
		if w > v && w < above {
			above = w
		}
	}
	return fmt.Sprintf(" (written values around it: %v and %v)", below, above)
}

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("... and %d more", len(s)-n))
}

func medianInts(s []int) float64 {
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c) == 0 {
		return 0
	}
	return float64(c[len(c)/2])
}

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

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
	// windows are every fault's interval, by kind, in log order.
	windows map[string][]faultWindow
	// tornQPs are the torn-qp-boundary writes, by instance: when, and how
	// many QP blocks the cut file held.
	tornQPs map[int][]tornCut
}

// tornCut is one torn-qp-boundary write.
type tornCut struct {
	at  time.Time
	qps int
}

var reTornQPs = regexp.MustCompile(`cut after QP block (\d+) of`)

// tornQPBoundary reports whether v is the QP count of a torn-qp-boundary
// write of instance id cut from 3 s before t to 2 s after (a scrape's
// timestamp is its start).
func (r *chaosRun) tornQPBoundary(id int, t time.Time, v float64) bool {
	for _, c := range r.tornQPs[id] {
		if float64(c.qps) == v && !c.at.Before(t.Add(-3*time.Second)) && !c.at.After(t.Add(2*time.Second)) {
			return true
		}
	}
	return false
}

// faultWindow is one injected fault: from its "fault" record to its
// "fault-end" record (for a fault that does not last, or is not undone
// before the log ends, the end is the start).
type faultWindow struct {
	id         int
	start, end time.Time
	value      uint64 // the record's Value
	detail     string
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
		windows: map[string][]faultWindow{}, tornQPs: map[int][]tornCut{},
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
			ws := r.windows[rec.Kind]
			for i := len(ws) - 1; i >= 0; i-- {
				if ws[i].id == rec.ID {
					ws[i].end = rec.Time
					break
				}
			}
			if rec.Kind == sim.ChaosOversized {
				if w := r.oversized[rec.ID]; len(w) > 0 && w[len(w)-1][1].IsZero() {
					w[len(w)-1][1] = rec.Time
				}
			}
		case "fault":
			r.faults[rec.Kind]++
			r.windows[rec.Kind] = append(r.windows[rec.Kind], faultWindow{id: rec.ID, start: rec.Time, end: rec.Time, value: rec.Value, detail: rec.Detail})
			if len(r.details[rec.Kind]) < 3 {
				r.details[rec.Kind] = append(r.details[rec.Kind], fmt.Sprintf("id %d: %s", rec.ID, rec.Detail))
			}
			if rec.Kind == sim.ChaosRunDirRecreate {
				r.recreates = append(r.recreates, rec.Time)
			}
			if rec.Kind == sim.ChaosTornQPBoundary {
				n := 0 // cut right after the Per-QP Statistics: header
				if m := reTornQPs.FindStringSubmatch(rec.Detail); m != nil {
					n, _ = strconv.Atoi(m[1])
				}
				r.tornQPs[rec.ID] = append(r.tornQPs[rec.ID], tornCut{rec.Time, n})
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

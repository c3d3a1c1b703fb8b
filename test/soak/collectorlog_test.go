// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build soak

package soak

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

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
// reported error, from its message (receiver/ernicreceiver: scraper.go,
// instance_recorder.go, stats_recorder.go).
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

// timesKey is the key under which the receiver's fault limiter rates a
// fault of key k with message msg: for the kinds where a different count,
// first problem or cause is a new fault (receiver faults.go: reported at
// once), the message without its varying tail.
func timesKey(k, msg string) string {
	for _, kind := range []string{"manifest", "stats-lines:", "proc:", "vm-launched-at:", "stats-unreadable:"} {
		if strings.HasPrefix(k, kind) {
			if i := strings.Index(msg, "; publishing the last complete read"); i >= 0 {
				msg = msg[:i]
			}
			if i := strings.Index(msg, "; no device metrics this scrape"); i >= 0 {
				msg = msg[:i]
			}
			return k + "|" + msg
		}
	}
	return k
}

type logReport struct {
	Keys     map[string]int    `json:"fault_log_lines_by_key"`
	Examples map[string]string `json:"fault_log_example_by_key"`
	TooOften []string          `json:"fault_keys_logged_too_often"`
	Overflow map[string]int    `json:"overflow_warnings_by_instance_counter_pid"`
	// OverflowDup are overflows logged again for the same process.
	OverflowDup []string       `json:"overflow_warnings_repeated"`
	Other       map[string]int `json:"other_warn_error_lines_by_msg"`
	Unparsed    int            `json:"unparsed_log_lines"`
	times       map[string][]time.Time
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
				tk := timesKey(k, e)
				r.times[tk] = append(r.times[tk], l.TS)
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
			// The faults across which the receiver once forgot it had logged it.
			switch {
			case run.acrossRecreate(ts[i-1], ts[i]):
				line += " (the run directory was removed in between)"
			case run.acrossDrop(overflowID[k], ts[i-1], ts[i]):
				line += " (a QP of the same process dropped its counters in between: qp-reuse)"
			}
			r.OverflowDup = append(r.OverflowDup, line)
		}
	}
	sort.Strings(r.TooOften)
	sort.Strings(r.OverflowDup)
	return r
}

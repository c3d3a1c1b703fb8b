// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build fleet

package fleet

import (
	"encoding/json"
	"strings"
	"time"
)

// logLine is one line of a collector's log (the console encoding: time,
// level, caller, message and the fields as JSON, tab-separated).
type logLine struct {
	at     time.Time
	level  string
	msg    string
	fields map[string]any
}

// field is the line's field name as a string ("" when absent).
func (l logLine) field(name string) string {
	switch v := l.fields[name].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// logLines returns the lines of log whose message begins with msg, in
// order.
func logLines(log, msg string) []logLine {
	var out []logLine
	for line := range strings.Lines(log) {
		parts := strings.SplitN(strings.TrimRight(line, "\n"), "\t", 5)
		if len(parts) < 4 || !strings.HasPrefix(parts[3], msg) {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, parts[0])
		if err != nil {
			continue
		}
		l := logLine{at: at, level: parts[1], msg: parts[3], fields: map[string]any{}}
		if len(parts) == 5 {
			_ = json.Unmarshal([]byte(parts[4]), &l.fields)
		}
		out = append(out, l)
	}
	return out
}

// The remote_write exporter's lines (exporter/internal/deliveryreport).
const (
	logFailed    = "remote_write failed; the batch waits in the queue and is retried"
	logRecovered = "remote_write delivers again"
	logDelivered = "remote_write backlog delivered"
	logRejected  = "remote_write request rejected by the endpoint"
	logDropped   = "remote_write dropped"
	logNotQueued = "remote_write: a new batch was not queued"
)

// after returns the lines at or after t.
func after(lines []logLine, t time.Time) []logLine {
	var out []logLine
	for _, l := range lines {
		if !l.at.Before(t) {
			out = append(out, l)
		}
	}
	return out
}

// maxPerMinute is the most lines of one cause within any minute.
func maxPerMinute(lines []logLine) int {
	most := 0
	for i := range lines {
		n := 0
		for j := i; j < len(lines) && lines[j].at.Sub(lines[i].at) < time.Minute; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
}

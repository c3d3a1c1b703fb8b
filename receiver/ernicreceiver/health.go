// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
)

// The expected states: logged once at Info, not scrape errors.
const (
	msgRunDirAbsent   = "Run directory absent: nothing to publish until rocm-ernic creates it"
	msgManifestAbsent = "Manifest not written yet: nothing to publish until the launcher writes it"
)

// runDirHealth records whether the run directory gives anything to publish.
// It logs the expected states once when entered, and reports each change of
// status once: RecoverableError after unhealthy_after, then StatusOK.
type runDirHealth struct {
	logger *zap.Logger
	// host takes the status events; nil before start.
	host  component.Host
	after time.Duration

	// expected is the current expected state's message, or "".
	expected string
	// problem is why this scrape has nothing to publish; statsFailed and
	// statsErr: the stats files that failed to read, and the first failure.
	problem     error
	statsFailed int
	statsErr    error
	// since is when the problem began; reported is what was reported, or "".
	since    time.Time
	reported string
}

func newRunDirHealth(logger *zap.Logger, after time.Duration) *runDirHealth {
	return &runDirHealth{logger: logger, after: after}
}

// start logs once which run directory is read, and when it is missing or
// not a directory, so that a mistyped run_dir shows at once.
func (h *runDirHealth) start(host component.Host, runDir string) {
	h.host = host
	fi, err := os.Stat(runDir)
	switch {
	case err == nil && fi.IsDir():
		h.logger.Info("Reading the rocm-ernic run directory", zap.String("run_dir", runDir))
	case errors.Is(err, fs.ErrNotExist):
		// The first scrape does not log it again.
		h.expected = msgRunDirAbsent
		h.logger.Info("Run directory absent: nothing is published until rocm-ernic creates it; if rocm-ernic is running, run_dir is wrong",
			zap.String("run_dir", runDir), zap.Duration("unhealthy_after", h.after))
	case err == nil:
		h.logger.Warn("Run directory is not a directory: nothing is published; set run_dir to rocm-ernic's run directory",
			zap.String("run_dir", runDir), zap.String("mode", fi.Mode().String()))
	default:
		h.logger.Warn("Run directory cannot be read: nothing is published", zap.String("run_dir", runDir), zap.Error(err))
	}
}

func (h *runDirHealth) begin() {
	h.problem, h.statsFailed, h.statsErr = nil, 0, nil
}

// enterExpected logs msg once and records it as this scrape's problem.
func (h *runDirHealth) enterExpected(msg, path string) {
	if h.expected != msg {
		h.expected = msg
		h.logger.Info(msg, zap.String("path", path))
	}
	h.fail(fmt.Errorf("%s: %s", path, msg))
}

// leaveExpected ends the expected state, so that entering it logs again.
func (h *runDirHealth) leaveExpected() { h.expected = "" }

// fail records err as this scrape's problem (the first one stays).
func (h *runDirHealth) fail(err error) {
	if h.problem == nil {
		h.problem = err
	}
}

func (h *runDirHealth) statsUnread(err error) {
	if h.statsFailed == 0 {
		h.statsErr = err
	}
	h.statsFailed++
}

// checkStats fails the scrape when every published instance's file failed.
func (h *runDirHealth) checkStats(published int) {
	if published > 0 && h.statsFailed == published {
		h.fail(fmt.Errorf("none of the %d instances' stats files could be read, the first: %w", published, h.statsErr))
	}
}

// end closes a scrape at now: it reports the status when it changes.
func (h *runDirHealth) end(now time.Time) {
	if h.problem == nil {
		h.since = time.Time{}
		if h.reported != "" {
			h.reported = ""
			h.logger.Info("Run directory readable again: receiver status OK")
			componentstatus.ReportStatus(h.host, componentstatus.NewEvent(componentstatus.StatusOK))
		}
		return
	}
	if h.since.IsZero() {
		h.since = now
	}
	msg := h.problem.Error()
	if now.Sub(h.since) < h.after || msg == h.reported {
		return
	}
	h.reported = msg
	err := fmt.Errorf("%w (since %s)", h.problem, h.since.UTC().Format(time.RFC3339))
	h.logger.Warn("Nothing to publish for longer than unhealthy_after: receiver status RecoverableError",
		zap.Duration("unhealthy_after", h.after), zap.Error(err))
	componentstatus.ReportStatus(h.host, componentstatus.NewRecoverableErrorEvent(err))
}

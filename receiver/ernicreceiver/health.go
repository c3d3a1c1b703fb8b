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

// The expected states of the run directory: logged once at Info when
// entered, not scrape errors (rocm-ernic stopped, or starting).
const (
	msgRunDirAbsent   = "Run directory absent: nothing to publish until rocm-ernic creates it"
	msgManifestAbsent = "Manifest not written yet: nothing to publish until the launcher writes it"
)

// runDirHealth is the receiver's one record of whether the run directory
// gives it anything to publish. It logs the expected states once each time
// they are entered, and reports the receiver's component status to the
// host: a RecoverableError once the run directory (or its manifest) has
// been unusable, or every instance's stats file unreadable, for longer
// than unhealthy_after, and StatusOK when that ends. Each transition is
// reported once, so that the health check follows without a report per
// scrape. A state that is normal for a few seconds (rocm-ernic not started
// yet) is logged, but reported only when it lasts.
type runDirHealth struct {
	logger *zap.Logger
	// host is the host given to Start, which takes the status events;
	// nil before Start (and in tests that do not watch them).
	host  component.Host
	after time.Duration

	// expected is the message of the expected state the last scrape was
	// in, "" when none.
	expected string
	// problem is why this scrape has nothing to publish, nil when it has;
	// statsFailed counts the instances whose stats file failed to read
	// this scrape, and statsErr is the first such failure.
	problem     error
	statsFailed int
	statsErr    error
	// since is when the current problem began (zero when there is none);
	// reported is the problem reported as a RecoverableError, "" while
	// the reported status is OK.
	since    time.Time
	reported string
}

func newRunDirHealth(logger *zap.Logger, after time.Duration) *runDirHealth {
	return &runDirHealth{logger: logger, after: after}
}

// start keeps the host for the status events and says once which run
// directory is read and, when it is not there or not a directory, that it
// is not, so that a mistyped run_dir shows in the first lines of the log.
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

// begin starts a scrape with no problem seen yet.
func (h *runDirHealth) begin() {
	h.problem, h.statsFailed, h.statsErr = nil, 0, nil
}

// enterExpected logs msg at Info unless it is the current expected state,
// and records the state as this scrape's problem.
func (h *runDirHealth) enterExpected(msg, path string) {
	if h.expected != msg {
		h.expected = msg
		h.logger.Info(msg, zap.String("path", path))
	}
	h.fail(fmt.Errorf("%s: %s", path, msg))
}

// leaveExpected ends the current expected state, so that entering it again
// logs again.
func (h *runDirHealth) leaveExpected() { h.expected = "" }

// fail records err as this scrape's problem (the first one stays).
func (h *runDirHealth) fail(err error) {
	if h.problem == nil {
		h.problem = err
	}
}

// statsUnread counts an instance whose stats file failed to read.
func (h *runDirHealth) statsUnread(err error) {
	if h.statsFailed == 0 {
		h.statsErr = err
	}
	h.statsFailed++
}

// checkStats makes it this scrape's problem when the stats file of every
// one of the published instances failed to read.
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

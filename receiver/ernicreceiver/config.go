// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package ernicreceiver // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver"

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/metadata"
)

// Defaults of the receiver's settings.
const (
	// DefaultRunDir is where rocm-ernic's systemd unit puts its run
	// directory (RuntimeDirectory=rocm-ernic).
	DefaultRunDir = "/run/rocm-ernic"
	// DefaultProcDir is the host's proc filesystem.
	DefaultProcDir = "/proc"
	// DefaultMaxQPsPerInstance bounds the QPs whose per-QP series are
	// published per instance: 1024 QPs are 8192 series with the default
	// metrics.
	DefaultMaxQPsPerInstance = 1024
	// DefaultMaxInstances bounds the manifest instances whose series are
	// published: four times the largest host measured (64 instances).
	DefaultMaxInstances = 256
	// MinCollectionInterval is the shortest collection_interval accepted: a
	// bare number is read as nanoseconds, and a scrape loop that fast would
	// only burn CPU on a file written about once a second.
	MinCollectionInterval = 100 * time.Millisecond
	// DefaultMaxLabelLength bounds attribute values taken from the run
	// directory; real ones (roles, MACs, VM names, connection states,
	// counter and opcode names) are under 40 bytes.
	DefaultMaxLabelLength = 128
	// DefaultMaxFileBytes bounds how much of one run-directory file is read:
	// a stats file of 10 000 QPs with opcode lines is about 5 MiB.
	DefaultMaxFileBytes = 64 << 20
	// DefaultUnhealthyAfter is how long the run directory may give
	// nothing to publish before the receiver reports a RecoverableError:
	// long enough for rocm-ernic to start after the collector.
	DefaultUnhealthyAfter = time.Minute
)

// Config is the configuration of the ernic receiver.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// RunDir is the rocm-ernic run directory holding instances.json and the
	// <id>.stats files. Default /run/rocm-ernic.
	RunDir string `mapstructure:"run_dir"`
	// ProcDir is the proc filesystem the manifest's pids are looked up in;
	// set it to where the host's /proc is mounted when the collector runs
	// in a container. Default /proc.
	ProcDir string `mapstructure:"proc_dir"`
	// MaxQPsPerInstance is the cardinality guard: per-QP series are
	// published for at most this many QPs of each instance, those with the
	// lowest handles (a stable choice: QP blocks are never removed while a
	// server lives); ernic.qp.unpublished counts the rest. 0 means no limit.
	MaxQPsPerInstance int `mapstructure:"max_qps_per_instance"`
	// MaxInstances is the instance guard: series are published for at most
	// this many manifest instances, those with the lowest ids (a stable
	// choice); the others are not looked up in /proc, their stats files are
	// not read, and ernic.instances.unpublished counts them. 0 means no
	// limit.
	MaxInstances int `mapstructure:"max_instances"`
	// MaxFileBytes is the largest run-directory file read, in bytes; a
	// larger file is reported and skipped.
	MaxFileBytes int64 `mapstructure:"max_file_bytes"`
	// HostName is the value of the host.name resource attribute, when that
	// attribute is enabled (resource_attributes: host.name: enabled: true,
	// as the push configs have it). Empty: the kernel's host name, read
	// when the receiver starts (os.Hostname).
	HostName string `mapstructure:"host_name"`
	// MaxLabelLength is the longest attribute value, in bytes, taken from
	// the run directory; longer values are cut (at a UTF-8 boundary) to
	// end with "~" and 8 hex digits of the whole value's FNV-1a hash, so
	// that distinct values stay distinct, and counted in
	// ernic.labels.truncated.
	MaxLabelLength int `mapstructure:"max_label_length"`
	// GCAfterScrape runs Go's garbage collection (runtime.GC) at the end
	// of a scrape when the heap in use and what that scrape allocated
	// would reach the runtime's earliest trigger in the next scrape: the
	// collection the next scrape would have started moves to where the
	// heap holds the least garbage, and the heap's goal, twice what it
	// marks, stops carrying a scrape in progress. Only while the marked
	// heap is at most 8 MiB (gcMaxLive: small hosts). It is the whole
	// process's collection (the collector's other components included),
	// hence off by default; config/local.yaml and
	// config/prometheus-remote-write.yaml set it (16x64: 0.33-0.41 and
	// 0.54-0.60 KiB a series above an idle collector against 0.79-0.91
	// and 0.75-1.05, docs/performance-memory.md).
	GCAfterScrape bool `mapstructure:"gc_after_scrape"`
	// UnhealthyAfter is how long the run directory may stay absent, not a
	// directory, unreadable or without a readable instances.json, or
	// every instance's stats file unreadable, before the receiver reports
	// its component status as a RecoverableError (which the healthcheckv2
	// extension turns into an unhealthy status); StatusOK follows when it
	// recovers. 0 reports at the first such scrape. Default 1m.
	UnhealthyAfter time.Duration `mapstructure:"unhealthy_after"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the receiver's own settings; the embedded controller and
// metrics settings validate themselves.
func (c *Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.RunDir) == "" {
		errs = append(errs, errors.New(`"run_dir" must not be empty: set it to the rocm-ernic run directory (default /run/rocm-ernic)`))
	}
	if strings.TrimSpace(c.ProcDir) == "" {
		errs = append(errs, errors.New(`"proc_dir" must not be empty: set it to the host's proc filesystem (default /proc)`))
	}
	if c.CollectionInterval > 0 && c.CollectionInterval < MinCollectionInterval {
		errs = append(errs, fmt.Errorf(`"collection_interval" is %s: it must be at least %s (the server writes about once a second; write a unit, e.g. 5s)`, c.CollectionInterval, MinCollectionInterval))
	}
	if c.MaxQPsPerInstance < 0 {
		errs = append(errs, fmt.Errorf(`"max_qps_per_instance" is %d: it must be 0 (no limit) or a positive number of QPs`, c.MaxQPsPerInstance))
	}
	if c.MaxInstances < 0 {
		errs = append(errs, fmt.Errorf(`"max_instances" is %d: it must be 0 (no limit) or a positive number of instances`, c.MaxInstances))
	}
	if c.MaxFileBytes <= 0 {
		errs = append(errs, fmt.Errorf(`"max_file_bytes" is %d: it must be a positive number of bytes (default %d)`, c.MaxFileBytes, DefaultMaxFileBytes))
	}
	if c.MaxLabelLength < 16 {
		errs = append(errs, fmt.Errorf(`"max_label_length" is %d: it must be at least 16 bytes (default %d)`, c.MaxLabelLength, DefaultMaxLabelLength))
	}
	if c.UnhealthyAfter < 0 {
		errs = append(errs, fmt.Errorf(`"unhealthy_after" is %s: it must be 0 (report at once) or a positive duration (default %s)`, c.UnhealthyAfter, DefaultUnhealthyAfter))
	}
	return errors.Join(errs...)
}

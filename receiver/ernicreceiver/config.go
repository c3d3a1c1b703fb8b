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
	// DefaultRunDir is rocm-ernic's systemd RuntimeDirectory.
	DefaultRunDir = "/run/rocm-ernic"
	// DefaultProcDir is the host's proc filesystem.
	DefaultProcDir = "/proc"
	// DefaultMaxQPsPerInstance bounds the QPs published per instance.
	DefaultMaxQPsPerInstance = 1024
	// DefaultMaxInstances is four times the largest host measured.
	DefaultMaxInstances = 256
	// MinCollectionInterval is the shortest collection_interval: a bare number
	// is nanoseconds, and a faster loop only burns CPU.
	MinCollectionInterval = 100 * time.Millisecond
	// DefaultMaxLabelLength bounds attribute values; real ones are under 40 bytes.
	DefaultMaxLabelLength = 128
	// DefaultMaxFileBytes bounds how much of one run-directory file is read.
	DefaultMaxFileBytes = 64 << 20
	// DefaultUnhealthyAfter leaves rocm-ernic time to start after the collector.
	DefaultUnhealthyAfter = time.Minute
)

// Config is the configuration of the ernic receiver.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// RunDir is the rocm-ernic run directory (instances.json, <id>.stats).
	RunDir string `mapstructure:"run_dir"`
	// ProcDir is the proc filesystem the manifest's pids are looked up in.
	ProcDir string `mapstructure:"proc_dir"`
	// MaxQPsPerInstance caps the QPs published per instance, lowest handles first.
	MaxQPsPerInstance int `mapstructure:"max_qps_per_instance"`
	// MaxInstances caps the instances published, lowest ids first; 0: none.
	MaxInstances int `mapstructure:"max_instances"`
	// MaxFileBytes is the largest run-directory file read.
	MaxFileBytes int64 `mapstructure:"max_file_bytes"`
	// HostName is host.name when that attribute is enabled; empty: os.Hostname.
	HostName string `mapstructure:"host_name"`
	// MaxLabelLength is the longest attribute value taken from the run directory.
	MaxLabelLength int `mapstructure:"max_label_length"`
	// GCAfterScrape collects at the end of a scrape when the next would start a
	// collection (gcPacer); off by default, as it is the whole process's.
	GCAfterScrape bool `mapstructure:"gc_after_scrape"`
	// UnhealthyAfter is how long nothing may be publishable before the component
	// status is a RecoverableError; 0: at the first such scrape.
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package rundir parses the files of a rocm-ernic run directory into plain Go
// values: the manifest instances.json (ParseManifest) and the per-instance
// <id>.stats files (ParseStats, ReadStats). It knows nothing of the collector;
// turning these values into metrics is the scraper's job.
//
// The format is the one of the rocm-ernic server's src/rdma/pvrdma_stats.c and
// of its launcher; the writers truncate and rewrite files in place, so every
// reader here decides whether what it read is complete before anything is
// published from it.
package rundir // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Package rundir parses the files of a rocm-ernic run directory, the manifest
// instances.json and the <id>.stats files, into plain Go values (README.md:
// the format). The writers rewrite files in place, so every reader decides
// whether what it read is complete before anything is published from it.
package rundir // import "github.com/rocm-ernic/otelcol-ernic/receiver/ernicreceiver/internal/rundir"

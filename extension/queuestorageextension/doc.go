// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package queuestorageextension is contrib's file_storage for the push
// exporters' persistent queues, plus a check at start: a queue file that
// bbolt cannot open or read (file_storage's recreate catches only some
// panics, and only while opening) is renamed aside as damaged, so that the
// exporter starts on a fresh file instead of failing; the files set aside
// are kept within a bound.
package queuestorageextension // import "github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"

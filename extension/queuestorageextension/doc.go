// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package queuestorageextension is the storage of the push exporters'
// persistent sending queues: contrib's file_storage, with its settings,
// plus what a fleet needs of it when a disk fails. At start, a queue file
// that bbolt cannot open or read (any error or panic, where file_storage's
// recreate catches only some panics, and only while opening) is renamed
// aside with the time and the word "damaged" in its name, so that the
// exporter starts on a fresh file instead of failing; and the files set
// aside, with file_storage's own *.backup files, are kept within a bound.
package queuestorageextension // import "github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"

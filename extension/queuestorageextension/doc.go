// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package queuestorageextension is contrib's file_storage plus a check at
// start: a queue file bbolt cannot read is set aside, so that its exporter
// starts on a fresh file instead of failing (README.md).
package queuestorageextension // import "github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"

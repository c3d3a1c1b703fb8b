// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package otlpqueue

// raceEnabled: see race_test.go.
const raceEnabled = false

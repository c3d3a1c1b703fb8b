// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package otlpqueue

// raceEnabled: the race detector drops sync.Pool items at random, so
// allocation counts do not hold.
const raceEnabled = true

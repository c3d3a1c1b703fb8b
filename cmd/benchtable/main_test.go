// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := strings.Join([]string{
		"BenchmarkFloor/16x64-2   5   200000 ns/op   26100 B/op   71 allocs/op",
		"BenchmarkParse/16x64-2   5   500000 ns/op   357606 B/op   1038 allocs/op",
		"BenchmarkScrape/default/16x64-2   5   18000000 ns/op   1800 ns/point   10000 points   7000000 B/op   110000 allocs/op",
		"BenchmarkScrape/default/64x1024-2   5   1000000000 ns/op   2500 ns/point   400000 points   7000000 B/op   4400000 allocs/op",
		"BenchmarkUnchanged/16x64-2   5   20000 ns/op",
		"BenchmarkSomethingWithoutSize-2   5   20000000 ns/op",
		"BenchmarkRecordFloor-2   5   2000000 ns/op   400 ns/point",
	}, "\n")
	var out bytes.Buffer
	code := run(strings.NewReader(in), &out)
	t.Log("\n" + out.String())
	if code != 0 {
		t.Errorf("exit %d, want 0: parse is 2.5x the floor and per-point growth 1.39", code)
	}
	for _, want := range []string{"16x64", "2.50", "1800", "11.00", "= 1.39", "20.0µs", " 25.0 ", "400 ns/point", "16x64 4.50 64x1024 6.25"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}

	// Several runs of a benchmark count with their median: two fast floors
	// among three do not hide a slow one, nor does one slow parse decide.
	runs := in + "\n" + strings.Join([]string{
		"BenchmarkFloor/16x64-2   5   150000 ns/op",
		"BenchmarkFloor/16x64-2   5   900000 ns/op",
		"BenchmarkParse/16x64-2   5   5000000 ns/op",
		"BenchmarkParse/16x64-2   5   450000 ns/op",
	}, "\n")
	out.Reset()
	if code := run(strings.NewReader(runs), &out); code != 0 {
		t.Errorf("exit %d, want 0\n%s", code, out.String())
	}
	// Medians: floor 200000 of 150000, 200000, 900000; parse 500000 of
	// 450000, 500000, 5000000.
	if !strings.Contains(out.String(), " 2.50 ") {
		t.Errorf("want the ratio of the medians, 2.50:\n%s", out.String())
	}

	// Parse 4x the floor misses the target.
	in = strings.Replace(in, "500000 ns/op", "800000 ns/op", 1)
	out.Reset()
	if code := run(strings.NewReader(in), &out); code != 1 {
		t.Errorf("exit %d, want 1 for parse at 4x the floor\n%s", code, out.String())
	}
}

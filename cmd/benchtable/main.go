// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Command benchtable turns the output of `make bench` (go test -bench over
// receiver/ernicreceiver: BenchmarkFloor, BenchmarkParse, BenchmarkScrape,
// BenchmarkRecordFloor)
// into one table per run-directory size, and checks the ratio targets of
// the project: parse at most 3× the floor at every size, and scrape cost per
// published data point at 64x1024 within 1.5× of that at 16x64. It reads the
// benchmark output on standard input and exits 1 when a target is missed.
// The unchanged column is BenchmarkUnchanged: the file work of a scrape
// of a run directory in which nothing was rewritten.
// A benchmark run several times (go test -count) counts with the median of
// each of its measurements, as benchstat summarises runs.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// result is one benchmark line's measurements by unit.
type result map[string]float64

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	runs := map[string]map[string][]float64{} // "Floor/16x64" → unit → one value per run
	var sizes []string
	r := benchfmt.NewReader(in, "stdin")
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		name := strings.TrimPrefix(string(res.Name.Base()), "Benchmark")
		_, parts := res.Name.Parts()
		var sub []string
		for _, p := range parts {
			if !strings.HasPrefix(string(p), "-") {
				sub = append(sub, strings.TrimPrefix(string(p), "/"))
			}
		}
		key := strings.Join(append([]string{name}, sub...), "/")
		m := runs[key]
		if m == nil {
			m = map[string][]float64{}
			runs[key] = m
		}
		for _, v := range res.Values {
			m[v.Unit] = append(m[v.Unit], v.Value)
			if v.OrigUnit != "" {
				m[v.OrigUnit] = append(m[v.OrigUnit], v.OrigValue)
			}
		}
		if len(sub) == 0 {
			continue // a benchmark without a size
		}
		if size := sub[len(sub)-1]; !slices.Contains(sizes, size) {
			sizes = append(sizes, size)
		}
	}
	if err := r.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		return 2
	}
	results := map[string]result{}
	for key, units := range runs {
		m := result{}
		for unit, vs := range units {
			m[unit] = median(vs)
		}
		results[key] = m
	}

	fmt.Fprintf(out, "%-9s %12s %12s %12s %14s %14s %11s %16s %13s %13s %14s\n",
		"size", "floor", "parse", "unchanged", "scrape", "scrape all", "parse/floor", "parse/unchanged", "ns/point", "ns/point all", "allocs/point")
	ok := true
	for _, size := range sizes {
		floor, parse, same := results["Floor/"+size], results["Parse/"+size], results["Unchanged/"+size]
		def, all := results["Scrape/default/"+size], results["Scrape/all/"+size]
		ratio := parse["sec/op"] / floor["sec/op"]
		fmt.Fprintf(out, "%-9s %12s %12s %12s %14s %14s %11.2f %16.1f %13.0f %13.0f %14.2f\n", size,
			dur(floor["sec/op"]), dur(parse["sec/op"]), dur(same["sec/op"]), dur(def["sec/op"]), dur(all["sec/op"]),
			ratio, parse["sec/op"]/same["sec/op"], def["ns/point"], all["ns/point"], def["allocs/op"]/def["points"])
		if ratio > 3 {
			fmt.Fprintf(out, "  MISSED: parse is %.2f× the floor at %s (target ≤ 3)\n", ratio, size)
			ok = false
		}
	}
	if rf := results["RecordFloor"]; rf != nil {
		fmt.Fprintf(out, "pdata floor (RecordFloor): %.0f ns/point; scrape ns/point over it:", rf["ns/point"])
		for _, size := range sizes {
			if def := results["Scrape/default/"+size]; def != nil {
				fmt.Fprintf(out, " %s %.2f", size, def["ns/point"]/rf["ns/point"])
			}
		}
		fmt.Fprintln(out)
	}
	small, large := results["Scrape/default/16x64"], results["Scrape/default/64x1024"]
	if small != nil && large != nil {
		growth := large["ns/point"] / small["ns/point"]
		fmt.Fprintf(out, "scrape ns/point 64x1024 / 16x64 = %.2f (target ≤ 1.5)\n", growth)
		if growth > 1.5 {
			fmt.Fprintln(out, "  MISSED: scrape cost per point grows with size")
			ok = false
		}
	}
	if !ok {
		return 1
	}
	return 0
}

func dur(sec float64) string {
	switch {
	case sec == 0:
		return "-"
	case sec < 1e-3:
		return fmt.Sprintf("%.1fµs", sec*1e6)
	case sec < 1:
		return fmt.Sprintf("%.2fms", sec*1e3)
	}
	return fmt.Sprintf("%.3fs", sec)
}

func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

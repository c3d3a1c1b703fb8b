#!/usr/bin/env bash
# End-to-end cost of otelcol-ernic (`make bench-e2e`): the collector with
# config/local.yaml's pipeline runs on ernic-sim at 16x64 (1 s scrapes) and
# 64x1024 (5 s scrapes), instances x QPs, for DURATION seconds each after a
# WARMUP. 16x64 runs with the config's memory limit (256 MiB); 64x1024, over
# half a million series, with ERNIC_MEMORY_LIMIT_MIB=3584, as the README's
# sizing rule asks (at 256 MiB the limiter refuses nearly every scrape). The
# script samples the collector's /proc every second and prints
# CPU seconds per minute, peak and steady (median of the second half)
# resident memory, the series served and how long one GET /metrics took
# (a Prometheus scrape_timeout must be longer), and the points the
# collector lost over the whole run (its own refused/failed/dropped
# counters, listed on stderr: the memory limiter refusing data shows here).
#
# Environment: OTELCOL, SIM (binaries; set by the Makefile), DURATION
# (default 180), WARMUP (default 30), BENCH_PORT (default 19840; it and the
# next two ports must be free on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
sim=${SIM:-bin/ernic-sim}
duration=${DURATION:-180}
warmup=${WARMUP:-30}
hz=$(getconf CLK_TCK)

# cpu_ticks PID: utime + stime of the process, in clock ticks.
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

run() {
	local instances=$1 qps=$2 interval=$3 limit=$4
	local dir port hport tport override sim_pid col_pid
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-bench.XXXXXX")
	port=${BENCH_PORT:-19840}
	hport=$((port + 1))
	tport=$((port + 2))
	override=$dir.yaml
	cat >"$override" <<YAML
receivers:
  ernic:
    collection_interval: $interval
    max_qps_per_instance: 0
exporters:
  prometheus:
    endpoint: 127.0.0.1:$port
extensions:
  health_check:
    endpoint: 127.0.0.1:$hport
service:
  pipelines:
    metrics:
      exporters: [prometheus]
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: $tport
YAML
	"$sim" -run-dir "$dir" -instances "$instances" -qps "$qps" -interval 1s >/dev/null &
	sim_pid=$!
	ERNIC_RUN_DIR=$dir ERNIC_MEMORY_LIMIT_MIB=$limit "$otelcol" --config config/local.yaml --config "$override" >"$dir.log" 2>&1 &
	col_pid=$!
	trap 'kill $col_pid $sim_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir" "$dir.yaml" "$dir.log" "$dir.lost" "$dir.metrics"' RETURN
	sleep "$warmup"
	local t0 c0 peak=0 samples=()
	t0=$(date +%s.%N)
	c0=$(cpu_ticks "$col_pid")
	for ((i = 0; i < duration; i++)); do
		sleep 1
		local r
		r=$(rss_kib "$col_pid")
		samples+=("$r")
		((r > peak)) && peak=$r
	done
	local c1 t1 series
	c1=$(cpu_ticks "$col_pid")
	t1=$(date +%s.%N)
	# One GET /metrics, as a Prometheus scrape would: its time and series.
	local get
	get=$(curl -s --max-time 300 -o "$dir.metrics" -w '%{time_total}' "127.0.0.1:$port/metrics" || true)
	series=$(grep -c '^ernic_' "$dir.metrics" || true)
	# The collector's own counters of points refused, failed or dropped.
	local lost
	curl -s "127.0.0.1:$tport/metrics" | grep -E '^otelcol_[a-z_]*(refused|failed|dropped|errored)[a-z_]*points' >"$dir.lost" || true
	lost=$(awk '{ n += $NF } END { printf "%d", n }' "$dir.lost")
	awk -v size="${instances}x${qps}" '$NF > 0 { print "  " size " lost: " $0 }' "$dir.lost" >&2
	local steady
	steady=$(printf '%s\n' "${samples[@]:$((duration / 2))}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	awk -v size="${instances}x${qps}" -v iv="$interval" -v c0="$c0" -v c1="$c1" -v hz="$hz" \
		-v t0="$t0" -v t1="$t1" -v peak="$peak" -v steady="$steady" -v series="$series" -v lost="$lost" -v limit="$limit" -v get="${get:-0}" 'BEGIN {
		printf "%-9s %-8s %9d %16.2f %14.1f %16.1f %10d %12d %14.2f\n", size, iv, limit, (c1 - c0) / hz / ((t1 - t0) / 60), peak / 1024, steady / 1024, series, lost, get
	}'
}

printf '%-9s %-8s %9s %16s %14s %16s %10s %12s %14s\n' size interval "limit MiB" "CPU s/min" "peak RSS MiB" "steady RSS MiB" series "lost points" "GET /metrics s"
run 16 64 1s 256
run 64 1024 5s 3584

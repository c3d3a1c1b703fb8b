#!/usr/bin/env bash
# End-to-end cost of otelcol-ernic (`make bench-e2e`): the collector alone,
# per size and pipeline. Against the legacy Python exporter, side by side at
# the same time on one machine, see scripts/bench-legacy.sh (`make
# bench-legacy`); this script gives no ratio to legacy figures taken on
# another machine or day.
#
# For each size (instances x QPs, SIZES) and each shipped pipeline
# (PIPELINES):
#   pull  config/local.yaml, a GET /metrics every 5 s, as Prometheus would;
#   prw   config/prometheus-remote-write.yaml into a real Prometheus (the
#         `prometheus` on PATH or PROMETHEUS_BIN; Debian's 2.42 is enough);
#   otlp  config/otlp.yaml into a second collector, the test build
#         (OTELCOL_TEST: an OTLP receiver with its default 4 MiB message
#         limit, a debug exporter);
#   otlphttp config/otlphttp.yaml, the same over HTTP (its OTLP/HTTP receiver);
# the collector runs on ernic-sim's run directory, written 6 times a second
# apart (every QP exists from the fourth) and then left alone (a static
# run directory; SIM_WRITES=0 rewrites them every second as
# rocm-ernic does), with 5 s scrapes and the
# memory limit raised (ERNIC_MEMORY_LIMIT_MIB=4096) so that nothing is
# refused. After WARMUP seconds the script samples the collector's /proc
# every second for DURATION seconds and prints per run: the series (those
# a GET serves; for a push run, the points the receiver accepted per
# scrape while measured), CPU
# seconds per minute, peak and steady (median of the second half) RSS and
# the anonymous part of the steady RSS (the rest is mapped files: the
# binary, and bbolt's queue file for the push pipelines),
# KiB per series (steady RSS above the idle pull collector's, with the same
# telemetry reader, per series; and above the idle collector of the same
# pipeline: `run idle`, about 40 s per pipeline before the measured runs), the
# median and the longest GET (pull only), and the points the collector lost
# (its own refused/failed/dropped counters, listed on stderr). First it
# prints two floors, the machine's speed for the receiver's work in the same
# run (BenchmarkRecordFloor, BenchmarkFloor).
#
# Environment: OTELCOL, OTELCOL_TEST, SIM (binaries; set by the Makefile), SIZES (default
# "16x64 64x256 16x1024 64x1024"), PIPELINES (default "pull prw otlp otlphttp"),
# DURATION (default 120), WARMUP (default 120: a collector takes one to two
# minutes to settle; at 16x64 remote write faults in thousands of pages and
# runs at up to twice its steady CPU in its first 90 s), SIM_WRITES (default 6),
# MEMORY_LIMIT_MIB (the memory limiter of every config; default 4096),
# BENCH_PORT (default 19840; it and the next four ports must be free on
# 127.0.0.1), PPROF (a port: the collector gets contrib's pprof extension
# there, and a 30 s CPU profile and a heap profile of each run are saved to
# build/bench-e2e/<size>-<pipeline>.{cpu,heap}.pprof; needs the build
# variant with the extension: `make bench-e2e-pprof` sets OTELCOL to it),
# PERF (a frequency in Hz: `perf record -g` of the collector while measured,
# saved to build/bench-e2e/<size>-<pipeline>.perf.data; at 16x64 a 30 s Go
# CPU profile holds about 10 samples, perf at 4999 Hz about 1,000 a minute;
# it names Go functions only in a binary with its symbol table, as the
# pprof variant is built),
# EXTRA_CONFIG (a config file given to the collector last, to measure a
# variant of the shipped configs, e.g. another merge_window), UNIT_ENV (0: run
# the collector without the systemd unit's Environment= and TimerSlackNSec=
# settings), FLOOR
# (0: skip the floors printed first: pdata_floor, read_floor), GZIP (0: the pull
# runs' GETs ask for the text uncompressed; by default they ask for gzip,
# as Prometheus does).
set -euo pipefail
# EXTRA_CONFIG as given, from the caller's directory (the script runs from
# the repository's root).
extra_config=${EXTRA_CONFIG:+$(realpath "$EXTRA_CONFIG")}
cd "$(dirname "$0")/.."
otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
otelcol_test=${OTELCOL_TEST:-build/otelcol-ernic-test/otelcol-ernic-test}
sim=${SIM:-bin/ernic-sim}
sizes=${SIZES:-16x64 64x256 16x1024 64x1024}
pipelines=${PIPELINES:-pull prw otlp otlphttp}
duration=${DURATION:-120}
warmup=${WARMUP:-120}
sim_writes=${SIM_WRITES:-6}
port=${BENCH_PORT:-19840}
prometheus=${PROMETHEUS_BIN:-prometheus}
mkdir -p build/bench-e2e
if [[ -n ${PERF:-} ]] && ! command -v perf >/dev/null; then
	echo "bench-e2e: PERF=$PERF needs perf on PATH (Debian: linux-perf)" >&2
	exit 1
fi
# The Go runtime's settings as the systemd unit gives them to the installed
# collector (its Environment= lines: GOMAXPROCS=1, GOMEMLIMIT; and its
# TimerSlackNSec=), for the measured collector and the idle one; UNIT_ENV=0
# runs without them.
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
[[ ${UNIT_ENV:-1} == 0 ]] || load_unit_env
accept=(-H 'Accept-Encoding: gzip')
[[ ${GZIP:-1} != 0 ]] || accept=()
# Whatever way the script ends, nothing it started stays behind (a
# Prometheus left over on the backend's port once took the next runs'
# data).
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT


# listening PORT: whether something listens on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_backend PORT LOG CMD...: starts the backend (a Prometheus or the
# second collector) and waits until it listens on PORT, its pid in
# extra_pid; fails when the port is taken before it starts (a process left
# over from an earlier run once took it, so that the collector under test
# sent to that one, or to nothing) or when the backend exits.
start_backend() {
	local p=$1 log=$2 i
	shift 2
	if listening "$p"; then
		echo "bench-e2e: 127.0.0.1:$p is taken before the backend starts; free it or set BENCH_PORT" >&2
		return 1
	fi
	"$@" >"$log" 2>&1 &
	extra_pid=$!
	for ((i = 0; i < 300; i++)); do
		if ! kill -0 "$extra_pid" 2>/dev/null; then
			echo "bench-e2e: the backend exited:" >&2
			tail -3 "$log" >&2
			return 1
		fi
		listening "$p" && return 0
		sleep 0.1
	done
	echo "bench-e2e: nothing listens on 127.0.0.1:$p after 30 s" >&2
	return 1
}
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }

# telemetry PORT: the collector's own metrics on a loopback pull reader.
telemetry() {
	cat <<YAML
service:
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: $1
YAML
}

# run SIZE PIPELINE: one measurement; prints a table row. SIZE "idle":
# the same pipeline (config, backend, GETs, telemetry reader) on a run
# directory whose manifest lists no instance ({"instances":[]}, rocm-ernic
# started and running nothing), so that the receiver publishes its
# cluster gauges each scrape and the pipeline sends them; prints its
# steady RSS in KiB (median of the last 10 s of 20 s after 15 s), or
# nothing when the collector did not last.
run() {
	local size=$1 pipe=$2 instances=${1%x*} qps=${1#*x} warmup=$warmup duration=$duration
	local dir col_pid="" sim_pid="" extra_pid="" tport=$((port + 2)) get_pid="" perf_pid=""
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-bench.XXXXXX")
	trap 'kill $col_pid $sim_pid $extra_pid $get_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' RETURN
	if [[ $size == idle ]]; then
		mkdir "$dir/run" && echo '{"instances":[]}' >"$dir/run/instances.json"
		warmup=15 duration=20
	else
		"$sim" -run-dir "$dir/run" -instances "$instances" -qps "$qps" -writes "$sim_writes" >/dev/null 2>&1 &
		sim_pid=$!
		sleep 7
	fi
	{
		scrape_yaml
		telemetry "$tport"
	} >"$dir/common.yaml"
	local configs=(--config "$dir/common.yaml") env=(ERNIC_RUN_DIR="$dir/run" ERNIC_MEMORY_LIMIT_MIB="${MEMORY_LIMIT_MIB:-4096}" ERNIC_STATE_DIR="$dir/state")
	case $pipe in
	pull)
		pull_yaml "$port" >"$dir/pipe.yaml"
		configs=(--config config/local.yaml "${configs[@]}" --config "$dir/pipe.yaml")
		;;
	prw)
		mkdir -p "$dir/prom"
		prometheus_yaml >"$dir/prom.yml"
		start_backend $((port + 3)) "$dir/prom.log" "$prometheus" --config.file="$dir/prom.yml" --storage.tsdb.path="$dir/prom" \
			--web.listen-address=127.0.0.1:$((port + 3)) --web.enable-remote-write-receiver || return 1
		configs=(--config config/prometheus-remote-write.yaml "${configs[@]}")
		env+=(ERNIC_REMOTE_WRITE_URL=http://127.0.0.1:$((port + 3))/api/v1/write)
		;;
	otlp | otlphttp)
		local proto=grpc endpoint=127.0.0.1:$((port + 3))
		[[ $pipe == otlp ]] || proto=http
		otlp_backend_yaml "$proto" "$endpoint" >"$dir/second.yaml"
		start_backend $((port + 3)) "$dir/second.log" "$otelcol_test" --config "$dir/second.yaml" || return 1
		if [[ $pipe == otlp ]]; then
			otlp_insecure_yaml >"$dir/pipe.yaml"
			configs=(--config config/otlp.yaml "${configs[@]}" --config "$dir/pipe.yaml")
		else
			configs=(--config config/otlphttp.yaml "${configs[@]}")
			endpoint=http://$endpoint
		fi
		env+=(ERNIC_OTLP_ENDPOINT="$endpoint")
		;;
	esac
	if [[ -n ${PPROF:-} ]]; then
		local exts=healthcheckv2
		[[ $pipe == pull ]] || exts=queue_storage/queue
		printf 'extensions:\n  pprof:\n    endpoint: 127.0.0.1:%d\nservice:\n  extensions: [%s, pprof]\n' "$PPROF" "$exts" >"$dir/pprof.yaml"
		configs+=(--config "$dir/pprof.yaml")
	fi
	[[ -z $extra_config ]] || configs+=(--config "$extra_config")
	(as_unit "${env[@]}" "$otelcol" "${configs[@]}" >"$dir/col.log" 2>&1) &
	col_pid=$!
	if [[ $pipe == pull ]]; then
		# A GET every 5 s, as a Prometheus scrape (which asks for gzip;
		# GZIP=0 asks for the text as it is): its time in gets.
		(
			while sleep 5; do
				curl -s --max-time 60 "${accept[@]}" -o /dev/null -w '%{time_total}\n' "127.0.0.1:$port/metrics" >>"$dir/gets" || true
			done
		) >/dev/null &
		get_pid=$!
	fi
	sleep "$warmup"
	: >"$dir/gets"
	if [[ -n ${PPROF:-} && $size != idle ]]; then
		curl -s -o "build/bench-e2e/$size-$pipe.cpu.pprof" "127.0.0.1:$PPROF/debug/pprof/profile?seconds=30" &
	fi
	if [[ -n ${PERF:-} && $size != idle ]]; then
		perf record -q -F "$PERF" -g -p "$col_pid" -o "build/bench-e2e/$size-$pipe.perf.data" -- sleep "$duration" 2>/dev/null &
		perf_pid=$!
	fi
	local t0 c0 peak=0 samples=() anons=() i r
	t0=$(date +%s.%N)
	c0=$(cpu_ns "$col_pid")
	# The receiver's accepted points now and a whole number of scrape
	# intervals (5 s) later: their difference per scrape is the series a
	# push run published (below).
	local scrapes=$((duration / 5))
	curl -s "127.0.0.1:$tport/metrics" >"$dir/telemetry0"
	(sleep $((scrapes * 5)) && curl -s "127.0.0.1:$tport/metrics" >"$dir/telemetry1") >/dev/null &
	local tel_pid=$!
	for ((i = 0; i < duration; i++)); do
		sleep 1
		r=$(rss_kib "$col_pid")
		samples+=("$r")
		anons+=("$(anon_kib "$col_pid")")
		((r > peak)) && peak=$r
	done
	local c1 t1 steady anon series get_med=- get_max=- lost
	c1=$(cpu_ns "$col_pid")
	t1=$(date +%s.%N)
	# perf writes its file after its sleep ends; the run must not kill
	# the collector (or the script end, perf) before that.
	[[ -z $perf_pid ]] || wait "$perf_pid" || true
	steady=$(printf '%s\n' "${samples[@]:$((duration / 2))}" | median)
	anon=$(printf '%s\n' "${anons[@]:$((duration / 2))}" | median)
	if [[ $size == idle ]]; then
		kill "$tel_pid" 2>/dev/null || true
		kill -0 "$col_pid" 2>/dev/null && echo "$steady"
		return
	fi
	curl -s "127.0.0.1:$tport/metrics" >"$dir/telemetry"
	if [[ -n ${PPROF:-} ]]; then
		curl -s -o "build/bench-e2e/$size-$pipe.heap.pprof" "127.0.0.1:$PPROF/debug/pprof/heap"
	fi
	if [[ $pipe == pull ]]; then
		series=$(curl -s --max-time 60 "127.0.0.1:$port/metrics" | grep -c '^ernic_' || true)
		get_med=$(median <"$dir/gets")
		get_max=$(sort -n "$dir/gets" | tail -1)
	else
		# The points the receiver accepted while measured, per scrape:
		# a scrape every 5 s gives every series one point (the files are
		# static), and the two readings, a whole number of intervals
		# apart to the millisecond, fall at one point of the scrape
		# cycle, so a scrape in progress at one is in progress at the
		# other. At 16x64 this is the pull run's count, 9,249.
		wait "$tel_pid" || true
		series=$(awk -v k="$scrapes" '/^otelcol_receiver_accepted_metric_points/ { p[FILENAME] += $NF }
			END { for (f in p) if (f ~ /telemetry0$/) a = p[f]; else b = p[f]; if (k > 0) printf "%d", (b - a) / k }' \
			"$dir/telemetry0" "$dir/telemetry1")
	fi
	grep -E '^otelcol_[a-z_]*(refused|failed|dropped|errored)[a-z_]*points' "$dir/telemetry" >"$dir/lost" || true
	lost=$(awk '{ n += $NF } END { printf "%d", n }' "$dir/lost")
	awk -v w="$size $pipe" '$NF > 0 { print "  " w " lost: " $0 }' "$dir/lost" >&2
	# A push pipeline whose every send fails refuses nothing until its queue
	# is full: the points its exporter sent, against those the receiver
	# accepted, tell a backend that took nothing (a scrape's worth may be
	# in flight).
	if [[ $pipe != pull ]]; then
		awk -v w="$size $pipe" '/^otelcol_receiver_accepted_metric_points/ { a += $NF }
			/^otelcol_exporter_sent_metric_points/ { s += $NF }
			END { if (a > 0 && s < 0.8 * a) printf "  %s: the exporter sent %d of the %d points accepted: is the backend taking them?\n", w, s, a }' \
			"$dir/telemetry" >&2
	fi
	grep -E 'Dropping data|Rejecting data|Refusing data|rejected by the endpoint|dropped the oldest' "$dir/col.log" | head -3 | sed "s/^/  $size $pipe log: /" >&2 || true
	awk -v size="$size" -v pipe="$pipe" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" \
		-v peak="$peak" -v steady="$steady" -v anon="$anon" -v idle="${idles[pull]}" -v own="${idles[$pipe]}" -v series="$series" -v lost="$lost" \
		-v gmed="$get_med" -v gmax="$get_max" 'BEGIN {
		cpu = (c1 - c0) / 1e9 / ((t1 - t0) / 60)
		kps = (series > 0) ? sprintf("%.2f", (steady - idle) / series) : "-"
		kpo = (series > 0) ? sprintf("%.2f", (steady - own) / series) : "-"
		gm = (gmed == "-") ? "-" : sprintf("%.3f", gmed)
		gx = (gmax == "-") ? "-" : sprintf("%.3f", gmax)
		printf "| %s | %s | %d | %.2f | %.1f | %.1f | %.1f | %s | %s | %s | %s | %d |\n",
			size, pipe, series, cpu, peak / 1024, steady / 1024, anon / 1024, kps, kpo, gm, gx, lost
	}'
}

# pdata_floor: the receiver's BenchmarkRecordFloor (building points in pdata,
# nothing read or kept; median of three, ns a point), the machine's speed
# for this kind of work in the same run: it was 157 and 274-283 on the same
# 2-vCPU VM on two days, and the collector's CPU moved with it. FLOOR=0
# skips it.
pdata_floor() {
	[[ ${FLOOR:-1} != 0 ]] || { echo "-"; return; }
	(cd receiver/ernicreceiver && go test -run '^$' -bench 'BenchmarkRecordFloor$' -count 3 . 2>/dev/null) |
		awk '{ for (i = 2; i <= NF; i++) if ($i == "ns/point") print $(i - 1) }' | median
}

# read_floor: the receiver's BenchmarkFloor at 16x64 and 64x1024 (read
# every file, split lines; median of three, ms), the machine's speed for
# reading the run directory in the same run. FLOOR=0 skips it.
read_floor() {
	[[ ${FLOOR:-1} != 0 ]] || { echo "- -"; return; }
	local out f16 f64
	out=$(cd receiver/ernicreceiver && go test -run '^$' -bench 'BenchmarkFloor/(16x64|64x1024)$' -count 3 . 2>/dev/null)
	f16=$(awk '$1 ~ /^BenchmarkFloor\/16x64/ { print $3 / 1e6 }' <<<"$out" | median)
	f64=$(awk '$1 ~ /^BenchmarkFloor\/64x1024/ { print $3 / 1e6 }' <<<"$out" | median)
	awk -v a="$f16" -v b="$f64" 'BEGIN { if (a > 0 && b > 0) printf "%.3f %.1f\n", a, b; else print "- -" }'
}

floor=$(pdata_floor)
read -r rfloor16 rfloor64 <<<"$(read_floor)"
# Each pipeline's idle collector; the pull one is the baseline of the
# KiB/series column for all three (as the issue's "idle collector").
declare -A idles
idle_pipes=$(printf '%s\n' pull $pipelines | awk '!seen[$0]++')
for pipe in $idle_pipes; do
	idles[$pipe]=$(run idle "$pipe") || true
	[[ ${idles[$pipe]} =~ ^[0-9]+$ ]] || { echo "bench-e2e: the idle $pipe collector failed" >&2; exit 1; }
done
printf 'pdata floor (BenchmarkRecordFloor, the machine'"'"'s speed for this work): %s ns a point\n' "$floor"
printf 'read floor (BenchmarkFloor): %s ms at 16x64, %s ms at 64x1024\n' "$rfloor16" "$rfloor64"
printf 'idle collector RSS, MiB:%s; sim files %s; %d s after %d s warm-up per run; GETs ask for %s; runtime environment: %s\n\n' "$(for p in $idle_pipes; do printf ' %s %.1f' "$p" "$(echo "${idles[$p]} / 1024" | bc -l)"; done)" \
	"$([[ $sim_writes -gt 0 ]] && echo "static after $sim_writes writes" || echo "rewritten every second")" "$duration" "$warmup" \
	"$([[ ${#accept[@]} -gt 0 ]] && echo gzip || echo "the text uncompressed")" "${unit_env[*]:-none}${unit_slack:+ TimerSlackNSec=$unit_slack}"
echo "| size | pipeline | series | CPU s/min | peak RSS MiB | steady RSS MiB | of it anonymous MiB | KiB/series | KiB/series above its pipeline's idle | GET median s | GET max s | lost points |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for size in $sizes; do
	for pipe in $pipelines; do
		run "$size" "$pipe"
	done
done

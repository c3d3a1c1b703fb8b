#!/usr/bin/env bash
# Two collectors side by side, at the same time (`make bench-pair`): A and B
# read one static run directory of the simulator (SIZE, instances x QPs),
# with 5 s scrapes, and each runs a shipped pipeline (PIPELINE, or
# A_PIPELINE and B_PIPELINE to compare two): pull (config/local.yaml, a GET
# every 5 s), prw (config/prometheus-remote-write.yaml into one
# Prometheus), otlp or otlphttp (config/otlp.yaml, config/otlphttp.yaml
# into one second collector with an OTLP receiver, the test build
# OTELCOL_TEST); ERNIC_HOST=A and =B
# keep their series apart. Each round starts both, 2.5 s apart so that their scrapes do not
# overlap (which one first alternates), lets them warm up for WARMUP
# seconds and counts the CPU their threads ran over DURATION seconds
# (/proc/PID/task/*/schedstat), with their minor page faults and RSS. It
# prints a row per round and the median of B's CPU over A's.
#
# Why: this VM's speed moves by up to 2x over minutes, so one collector
# measured after the other (make bench-e2e) moves by +-20 % at 16x64 from
# one round to the next, and a change worth 5-10 % cannot be seen. Run at
# the same time, both see the same machine: two identical collectors gave
# B/A of 0.97-1.07 over three rounds.
#
# Environment: A_OTELCOL, B_OTELCOL (binaries; default OTELCOL, set by the
# Makefile), OTELCOL_TEST (the second collector; set by the Makefile), A_ENV, B_ENV (extra environment, "K=V K=V", e.g.
# B_ENV=GODEBUG=madvdontneed=0), A_CONFIG, B_CONFIG (a config file added
# last, e.g. a receiver setting), SIZE (default 16x64), PIPELINE (pull,
# prw, otlp or otlphttp; default prw), A_PIPELINE, B_PIPELINE (default
# PIPELINE), DURATION (default 60), WARMUP (default 120: both must
# have settled; in its first 90 s a collector grows its heap and faults in
# its pages, at up to twice its steady CPU), ROUNDS
# (default 5), PORT (default 19960; it and the next eight must be free on
# 127.0.0.1), PROMETHEUS_BIN (default prometheus on PATH; prw only),
# TELEMETRY (1: each collector also serves its own telemetry, level
# detailed, on PORT+7 for A and PORT+8 for B, and a second table gives per
# round what each one sent a scrape over the measured window: points
# (otelcol_exporter_sent_metric_points), HTTP requests and their bytes
# (http_client_request_body_size: remote write and OTLP/HTTP). Its
# instruments cost CPU on every request, so the CPU of such a run is not
# the shipped collector's: count requests and measure CPU in separate
# invocations). Both
# collectors get the systemd unit's runtime settings (its Environment= and
# TimerSlackNSec=), as in bench-e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
a_bin=${A_OTELCOL:-$otelcol} b_bin=${B_OTELCOL:-$otelcol}
otelcol_test=${OTELCOL_TEST:-build/otelcol-ernic-test/otelcol-ernic-test}
sim=${SIM:-bin/ernic-sim}
size=${SIZE:-16x64}
a_pipe=${A_PIPELINE:-${PIPELINE:-prw}} b_pipe=${B_PIPELINE:-${PIPELINE:-prw}}
duration=${DURATION:-60}
warmup=${WARMUP:-120}
rounds=${ROUNDS:-5}
port=${PORT:-19960}
telemetry=${TELEMETRY:-0}
prometheus=${PROMETHEUS_BIN:-prometheus}
for pipe in "$a_pipe" "$b_pipe"; do
	case $pipe in
	pull | prw | otlp | otlphttp) ;;
	*)
		echo "bench-pair: a pipeline must be pull, prw, otlp or otlphttp, not $pipe" >&2
		exit 2
		;;
	esac
done
pipes=" $a_pipe $b_pipe "

# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
load_unit_env
dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-pair.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

"$sim" -run-dir "$dir/run" -instances "${size%x*}" -qps "${size#*x}" -writes 6 >/dev/null 2>&1 &
if [[ $pipes == *" prw "* ]]; then
	mkdir "$dir/prom"
	prometheus_yaml >"$dir/prom.yml"
	"$prometheus" --config.file="$dir/prom.yml" --storage.tsdb.path="$dir/prom" \
		--web.listen-address="127.0.0.1:$((port + 4))" --web.enable-remote-write-receiver >"$dir/prom.log" 2>&1 &
fi
if [[ $pipes == *" otlp"* ]]; then
	otlp_backend_yaml grpc 127.0.0.1:$((port + 5)) http 127.0.0.1:$((port + 6)) >"$dir/second.yaml"
	"$otelcol_test" --config "$dir/second.yaml" >"$dir/second.log" 2>&1 &
	otlp_insecure_yaml >"$dir/otlp-insecure.yaml"
fi
sleep 7
scrape_yaml >"$dir/common.yaml"


# tel_port NAME: where collector NAME serves its telemetry (TELEMETRY=1).
tel_port() { if [[ $1 == A ]]; then echo $((port + 7)); else echo $((port + 8)); fi; }
# sent NAME: points, HTTP requests and request bytes the collector NAME sent so far.
sent() {
	local p
	p=$(tel_port "$1")
	echo "$(counter "$p" otelcol_exporter_sent_metric_points) $(counter "$p" http_client_request_body_size_count) $(counter "$p" http_client_request_body_size_sum)"
}

# start NAME PIPELINE BIN ENV CONFIG PORT: starts a collector (and its GETs
# for pull); writes its PID and, for pull, the GET loop's to $dir/NAME.pids.
start() {
	local name=$1 pipe=$2 bin=$3 extra_env=$4 extra_config=$5 p=$6 configs
	mkdir -p "$dir/$name"
	case $pipe in
	pull)
		pull_yaml "$p" >"$dir/$name/pipe.yaml"
		configs=(--config config/local.yaml --config "$dir/common.yaml" --config "$dir/$name/pipe.yaml")
		;;
	prw) configs=(--config config/prometheus-remote-write.yaml --config "$dir/common.yaml") ;;
	otlp) configs=(--config config/otlp.yaml --config "$dir/common.yaml" --config "$dir/otlp-insecure.yaml") ;;
	otlphttp) configs=(--config config/otlphttp.yaml --config "$dir/common.yaml") ;;
	esac
	local otlp_endpoint=127.0.0.1:$((port + 5))
	[[ $pipe != otlphttp ]] || otlp_endpoint=http://127.0.0.1:$((port + 6))
	if [[ $telemetry == 1 ]]; then
		telemetry_yaml "$(tel_port "$name")" >"$dir/$name/tel.yaml"
		configs+=(--config "$dir/$name/tel.yaml")
	fi
	[[ -z $extra_config ]] || configs+=(--config "$extra_config")
	# shellcheck disable=SC2086 # extra_env is "K=V K=V"
	(
		as_unit ERNIC_HOST="$name" ERNIC_RUN_DIR="$dir/run" ERNIC_STATE_DIR="$dir/$name/state" \
			ERNIC_MEMORY_LIMIT_MIB=4096 ERNIC_REMOTE_WRITE_URL="http://127.0.0.1:$((port + 4))/api/v1/write" \
			ERNIC_OTLP_ENDPOINT="$otlp_endpoint" \
			$extra_env "$bin" "${configs[@]}" >"$dir/$name/col.log" 2>&1
	) &
	echo $! >"$dir/$name.pids"
	if [[ $pipe == pull ]]; then
		(while sleep 5; do curl -s -H 'Accept-Encoding: gzip' -o /dev/null "127.0.0.1:$p/metrics" || true; done) >/dev/null 2>&1 &
		echo $! >>"$dir/$name.pids"
	fi
}

echo "A: $a_pipe, $a_bin${A_ENV:+, $A_ENV}${A_CONFIG:+, $A_CONFIG}; B: $b_pipe, $b_bin${B_ENV:+, $B_ENV}${B_CONFIG:+, $B_CONFIG}; $size, ${duration} s after ${warmup} s"
echo
echo "| round | A CPU s/min | B CPU s/min | B / A | A faults/min | B faults/min | A RSS MiB | B RSS MiB |"
echo "|---|---|---|---|---|---|---|---|"
ratios=() sent_rows=()
for ((r = 1; r <= rounds; r++)); do
	first=A
	((r % 2)) || first=B
	for name in $first $([[ $first == A ]] && echo B || echo A); do
		if [[ $name == A ]]; then
			start A "$a_pipe" "$a_bin" "${A_ENV:-}" "${A_CONFIG:-}" "$port"
		else
			start B "$b_pipe" "$b_bin" "${B_ENV:-}" "${B_CONFIG:-}" $((port + 2))
		fi
		[[ $name != "$first" ]] || sleep 2.5
	done
	sleep "$warmup"
	mapfile -t a_pids <"$dir/A.pids"
	mapfile -t b_pids <"$dir/B.pids"
	a=${a_pids[0]} b=${b_pids[0]}
	ca=$(cpu_ns "$a") cb=$(cpu_ns "$b") fa=$(minflt "$a") fb=$(minflt "$b")
	[[ $telemetry != 1 ]] || { read -r pa0 qa0 ba0 < <(sent A); read -r pb0 qb0 bb0 < <(sent B); }
	sleep "$duration"
	if [[ $telemetry == 1 ]]; then
		read -r pa qa ba < <(sent A)
		read -r pb qb bb < <(sent B)
		sent_rows+=("$(awk -v r="$r" -v s="$duration" -v pa=$((pa - pa0)) -v qa=$((qa - qa0)) -v ba=$((ba - ba0)) -v pb=$((pb - pb0)) -v qb=$((qb - qb0)) -v bb=$((bb - bb0)) \
			'BEGIN { n = s / 5; printf "| %d | %.0f | %.0f | %.1f | %.1f | %.0f | %.0f |", r, pa / n, pb / n, qa / n, qb / n, ba / n / 1000, bb / n / 1000 }')")
	fi
	ca=$(($(cpu_ns "$a") - ca)) cb=$(($(cpu_ns "$b") - cb)) fa=$(($(minflt "$a") - fa)) fb=$(($(minflt "$b") - fb))
	ra=$(rss_kib "$a") rb=$(rss_kib "$b")
	# A push collector that could not deliver would be measured retrying.
	for name in A B; do
		if grep -q 'Exporting failed' "$dir/$name/col.log"; then
			echo "bench-pair: collector $name failed to export:" >&2
			grep -m 3 'Exporting failed' "$dir/$name/col.log" >&2
			exit 1
		fi
	done
	kill "${a_pids[@]}" "${b_pids[@]}" 2>/dev/null || true
	wait "$a" "$b" 2>/dev/null || true
	rm -rf "$dir/A" "$dir/B"
	ratios+=("$(awk -v a="$ca" -v b="$cb" 'BEGIN { printf "%.3f", b / a }')")
	awk -v r="$r" -v ca="$ca" -v cb="$cb" -v fa="$fa" -v fb="$fb" -v ra="$ra" -v rb="$rb" -v d="$duration" -v q="${ratios[-1]}" \
		'BEGIN { printf "| %d | %.3f | %.3f | %s | %d | %d | %.1f | %.1f |\n", r, ca / 1e9 * 60 / d, cb / 1e9 * 60 / d, q, fa * 60 / d, fb * 60 / d, ra / 1024, rb / 1024 }'
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "\nB / A: median %s of %d rounds (%s to %s)\n", (NR % 2) ? v[(NR + 1) / 2] : sprintf("%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2), NR, v[1], v[NR] }'
if [[ $telemetry == 1 ]]; then
	printf '\nSent a scrape (5 s) over the measured window:\n\n'
	echo "| round | A points | B points | A requests | B requests | A kB | B kB |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${sent_rows[@]}"
fi

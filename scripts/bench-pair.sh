#!/usr/bin/env bash
# Two collectors side by side, at the same time (`make bench-pair`): A and B
# read one static run directory of the simulator (SIZE, instances x QPs),
# with 5 s scrapes, and serve (PIPELINE=pull, a GET every 5 s each) or push
# (PIPELINE=prw, into one Prometheus; ERNIC_HOST=A and =B keep their series
# apart). Each round starts both, 2.5 s apart so that their scrapes do not
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
# Makefile), A_ENV, B_ENV (extra environment, "K=V K=V", e.g.
# B_ENV=GODEBUG=madvdontneed=0), A_CONFIG, B_CONFIG (a config file added
# last, e.g. a receiver setting), SIZE (default 16x64), PIPELINE (pull or
# prw; default prw), DURATION (default 60), WARMUP (default 120: both must
# have settled; in its first 90 s a collector grows its heap and faults in
# its pages, at up to twice its steady CPU), ROUNDS
# (default 5), PORT (default 19960; it and the next five must be free on
# 127.0.0.1), PROMETHEUS_BIN (default prometheus on PATH; prw only). Both
# collectors get the systemd unit's runtime settings (its Environment= and
# TimerSlackNSec=), as in bench-e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
a_bin=${A_OTELCOL:-$otelcol} b_bin=${B_OTELCOL:-$otelcol}
sim=${SIM:-bin/ernic-sim}
size=${SIZE:-16x64}
pipe=${PIPELINE:-prw}
duration=${DURATION:-60}
warmup=${WARMUP:-120}
rounds=${ROUNDS:-5}
port=${PORT:-19960}
prometheus=${PROMETHEUS_BIN:-prometheus}
case $pipe in
pull | prw) ;;
*)
	echo "bench-pair: PIPELINE must be pull or prw, not $pipe" >&2
	exit 2
	;;
esac

mapfile -t unit_env < <(sed -n 's/^Environment=//p' deploy/otelcol-ernic.service)
unit_slack=$(sed -n 's/^TimerSlackNSec=//p' deploy/otelcol-ernic.service)
dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-pair.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

"$sim" -run-dir "$dir/run" -instances "${size%x*}" -qps "${size#*x}" -writes 6 >/dev/null 2>&1 &
if [[ $pipe == prw ]]; then
	mkdir "$dir/prom"
	printf 'global:\n  scrape_interval: 1h\nscrape_configs: []\n' >"$dir/prom.yml"
	"$prometheus" --config.file="$dir/prom.yml" --storage.tsdb.path="$dir/prom" \
		--web.listen-address="127.0.0.1:$((port + 4))" --web.enable-remote-write-receiver >"$dir/prom.log" 2>&1 &
fi
sleep 7
printf 'receivers:\n  ernic:\n    collection_interval: 5s\n    max_qps_per_instance: 0\n' >"$dir/common.yaml"

cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
minflt() { awk '{ print $10 }' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# start NAME BIN ENV CONFIG PORT: starts a collector (and its GETs for
# pull); writes its PID and, for pull, the GET loop's to $dir/NAME.pids.
start() {
	local name=$1 bin=$2 extra_env=$3 extra_config=$4 p=$5 configs
	mkdir -p "$dir/$name"
	if [[ $pipe == pull ]]; then
		printf 'exporters:\n  prometheus_text:\n    endpoint: 127.0.0.1:%d\nextensions:\n  health_check:\n    endpoint: 127.0.0.1:%d\n' "$p" $((p + 1)) >"$dir/$name/pipe.yaml"
		configs=(--config config/local.yaml --config "$dir/common.yaml" --config "$dir/$name/pipe.yaml")
	else
		configs=(--config config/prometheus-remote-write.yaml --config "$dir/common.yaml")
	fi
	[[ -z $extra_config ]] || configs+=(--config "$extra_config")
	# shellcheck disable=SC2086 # extra_env is "K=V K=V"
	(
		[[ -z $unit_slack ]] || echo "$unit_slack" >/proc/self/timerslack_ns
		exec env "${unit_env[@]}" ERNIC_HOST="$name" ERNIC_RUN_DIR="$dir/run" ERNIC_STATE_DIR="$dir/$name/state" \
			ERNIC_MEMORY_LIMIT_MIB=4096 ERNIC_REMOTE_WRITE_URL="http://127.0.0.1:$((port + 4))/api/v1/write" \
			$extra_env "$bin" "${configs[@]}" >"$dir/$name/col.log" 2>&1
	) &
	echo $! >"$dir/$name.pids"
	if [[ $pipe == pull ]]; then
		(while sleep 5; do curl -s -H 'Accept-Encoding: gzip' -o /dev/null "127.0.0.1:$p/metrics" || true; done) >/dev/null 2>&1 &
		echo $! >>"$dir/$name.pids"
	fi
}

echo "| round | A CPU s/min | B CPU s/min | B / A | A faults/min | B faults/min | A RSS MiB | B RSS MiB |"
echo "|---|---|---|---|---|---|---|---|"
ratios=()
for ((r = 1; r <= rounds; r++)); do
	first=A
	((r % 2)) || first=B
	for name in $first $([[ $first == A ]] && echo B || echo A); do
		if [[ $name == A ]]; then
			start A "$a_bin" "${A_ENV:-}" "${A_CONFIG:-}" "$port"
		else
			start B "$b_bin" "${B_ENV:-}" "${B_CONFIG:-}" $((port + 2))
		fi
		[[ $name != "$first" ]] || sleep 2.5
	done
	sleep "$warmup"
	mapfile -t a_pids <"$dir/A.pids"
	mapfile -t b_pids <"$dir/B.pids"
	a=${a_pids[0]} b=${b_pids[0]}
	ca=$(cpu_ns "$a") cb=$(cpu_ns "$b") fa=$(minflt "$a") fb=$(minflt "$b")
	sleep "$duration"
	ca=$(($(cpu_ns "$a") - ca)) cb=$(($(cpu_ns "$b") - cb)) fa=$(($(minflt "$a") - fa)) fb=$(($(minflt "$b") - fb))
	ra=$(rss_kib "$a") rb=$(rss_kib "$b")
	kill "${a_pids[@]}" "${b_pids[@]}" 2>/dev/null || true
	wait "$a" "$b" 2>/dev/null || true
	rm -rf "$dir/A" "$dir/B"
	ratios+=("$(awk -v a="$ca" -v b="$cb" 'BEGIN { printf "%.3f", b / a }')")
	awk -v r="$r" -v ca="$ca" -v cb="$cb" -v fa="$fa" -v fb="$fb" -v ra="$ra" -v rb="$rb" -v d="$duration" -v q="${ratios[-1]}" \
		'BEGIN { printf "| %d | %.3f | %.3f | %s | %d | %d | %.1f | %.1f |\n", r, ca / 1e9 * 60 / d, cb / 1e9 * 60 / d, q, fa * 60 / d, fb * 60 / d, ra / 1024, rb / 1024 }'
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "\nB / A: median %s of %d rounds (%s to %s)\n", (NR % 2) ? v[(NR + 1) / 2] : sprintf("%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2), NR, v[1], v[NR] }'

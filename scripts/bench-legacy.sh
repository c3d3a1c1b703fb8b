#!/usr/bin/env bash
# The collector and the legacy Python exporter side by side, at the same
# time, on the same run directory (`make bench-legacy
# LEGACY_EXPORTER=/path/to/ernic-exporter`).
#
# The legacy exporter (rocm-ernic's prometheus/ernic-exporter, MIT-licensed
# Python) is not part of this repository and never goes into it: give the
# path of a local copy in LEGACY_EXPORTER. It runs under LEGACY_PYTHON
# (default /usr/bin/python3: the system's Python, where Debian's
# python3-prometheus-client installs prometheus_client; a pyenv python3 on
# PATH would lack it). `scripts/bench-legacy.sh deps` only checks both (and
# installs python3-prometheus-client as root when it is missing): the
# Makefile runs it before building anything.
#
# For each size (instances x QPs, SIZES) one simulator run directory is
# written 6 times a second apart and then left alone (a static run
# directory, as bench-pair and bench-e2e measure). Each round then starts the
# legacy exporter (ERNIC_RUN_DIR, ERNIC_EXPORTER_PORT) and the collector
# (config/local.yaml, the pull endpoint, 5 s scrapes, every QP published,
# with the systemd unit's Environment= and TimerSlackNSec=, as
# scripts/bench-lib.sh's as_unit starts it), both on that run directory,
# 2.5 s apart (which one first alternates) so that the collector's
# scrape-and-GET and the legacy exporter's GET do not fall together. Each
# endpoint gets a GET every 5 s (started every 5 s whatever the GET
# before took; gzip accepted, as Prometheus asks; the legacy exporter
# answers uncompressed). After WARMUP seconds one GET of each counts the
# series it serves; then the script counts the CPU each process's threads
# ran over WINDOW seconds (/proc/PID/task/*/schedstat, the scheduler's
# nanoseconds), its RSS at the end of the window, and the median and the
# longest time of the GETs started in the window. It prints a row per round
# with the ratios collector / legacy (CPU, RSS, median GET), then the median
# and the spread (min to max) of each ratio per size.
#
# The goal at 16x64: the collector at most 1/5 of the legacy exporter's CPU
# in every round. A 16x64 round above MAX_CPU_RATIO_16X64 (default 0.2)
# gives a FAIL line, and the script exits 1 once every size has run.
#
# Why side by side: this 2-core VM's speed moves by up to 2x over minutes
# (other builds run on it), so figures taken one after the other, or on
# another machine, compare the machine as much as the programs. Both see the
# same machine here, at the same time.
#
# Environment: LEGACY_EXPORTER (required), LEGACY_PYTHON (default
# /usr/bin/python3), OTELCOL, SIM (binaries; set by the Makefile), SIZES
# (default "16x64 64x256 64x1024"), ROUNDS (a number for every size, or
# "SIZE=N" words with an optional plain number for the others, e.g. "5
# 64x1024=2"; default 5), WARMUP (default 90), WINDOW (default 120),
# MAX_CPU_RATIO_16X64 (default 0.2), PORT (default 19970: the collector's
# endpoint; its health check on PORT+1, the legacy exporter on PORT+2; all
# free on 127.0.0.1), OUT (default build/bench-legacy: the output, a copy
# of what is printed, bench-legacy-<UTC time>.txt, and each round's logs).
set -euo pipefail
cd "$(dirname "$0")/.."

legacy=${LEGACY_EXPORTER:-}
python=${LEGACY_PYTHON:-/usr/bin/python3}

# deps: the legacy exporter's copy and its Python module.
deps() {
	if [[ -z $legacy ]]; then
		echo "bench-legacy: LEGACY_EXPORTER is not set: give the path of a local copy of rocm-ernic's" >&2
		echo "prometheus/ernic-exporter (MIT-licensed Python; kept outside this repository), e.g." >&2
		echo "  make bench-legacy LEGACY_EXPORTER=/path/to/ernic-exporter" >&2
		return 1
	fi
	if [[ ! -f $legacy || ! -r $legacy ]]; then
		echo "bench-legacy: LEGACY_EXPORTER=$legacy is not a readable file" >&2
		return 1
	fi
	if [[ ! -x $python ]]; then
		echo "bench-legacy: no Python at LEGACY_PYTHON=$python" >&2
		return 1
	fi
	"$python" -c 'import prometheus_client' 2>/dev/null && return 0
	if [[ $(id -u) -ne 0 || $python != /usr/bin/python3 ]]; then
		echo "bench-legacy: $python lacks prometheus_client, which the legacy exporter needs:" >&2
		echo "install Debian's python3-prometheus-client as root (apt-get install python3-prometheus-client)" >&2
		return 1
	fi
	echo "bench-legacy: installing python3-prometheus-client (Debian package)" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-prometheus-client
	"$python" -c 'import prometheus_client'
}
deps || exit 1
[[ ${1:-} != deps ]] || exit 0
legacy=$(realpath "$legacy")

otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
sim=${SIM:-bin/ernic-sim}
sizes=${SIZES:-16x64 64x256 64x1024}
rounds_spec=${ROUNDS:-5}
warmup=${WARMUP:-90}
window=${WINDOW:-120}
max_ratio=${MAX_CPU_RATIO_16X64:-0.2}
port=${PORT:-19970}
lport=$((port + 2))
out=${OUT:-build/bench-legacy}
for bin in "$otelcol" "$sim"; do
	[[ -x $bin ]] || {
		echo "bench-legacy: $bin is missing (make otelcol sim)" >&2
		exit 1
	}
done

# rounds SIZE: the rounds of SIZE from ROUNDS.
rounds() {
	local w n=5
	for w in $rounds_spec; do
		case $w in
		"$1"=*) echo "${w#*=}" && return ;;
		*=*) ;;
		*) n=$w ;;
		esac
	done
	echo "$n"
}

# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
load_unit_env

# listening PORT: whether something listens on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$port" $((port + 1)) "$lport"; do
	if listening "$p"; then
		echo "bench-legacy: 127.0.0.1:$p is taken; free it or set PORT" >&2
		exit 1
	fi
done

mkdir -p "$out"
report=$out/bench-legacy-$(date -u +%Y%m%dT%H%M%SZ).txt
dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-legacy.XXXXXX")
lpid= teepid=
# At the end, nothing started stays behind (the legacy exporter with
# SIGKILL: see below). The jobs are waited for by PID: a bare wait would
# also wait for the tee below, which ends only once this script's output
# is closed.
cleanup() {
	local jobs
	jobs=$(jobs -p)
	# shellcheck disable=SC2086 # one PID a word
	[[ -z $jobs ]] || kill $jobs 2>/dev/null || true
	[[ -z $lpid ]] || kill -KILL "$lpid" 2>/dev/null || true
	# shellcheck disable=SC2086
	[[ -z $jobs ]] || wait $jobs 2>/dev/null || true
	rm -rf "$dir"
	if [[ -n $teepid ]]; then
		exec >&- 2>&-
		wait "$teepid" 2>/dev/null || true
	fi
}
trap cleanup EXIT
# Everything printed goes to the report as well.
exec > >(tee "$report") 2>&1
teepid=$!

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else printf "%.4g\n", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
# wait_listen PORT PID LOG: until PORT listens; fails if PID exits first.
wait_listen() {
	local i
	for ((i = 0; i < 300; i++)); do
		listening "$1" && return 0
		if ! kill -0 "$2" 2>/dev/null; then
			echo "bench-legacy: the process for 127.0.0.1:$1 exited:" >&2
			tail -5 "$3" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "bench-legacy: nothing listens on 127.0.0.1:$1 after 30 s" >&2
	return 1
}
# get_loop URL FILE: a GET of URL started every 5 s, whatever the one before
# took. FILE gets "S start" as one starts and "E start seconds" as it ends
# (seconds "fail" when it did not answer 200); start is the epoch time.
get_loop() {
	local s
	while true; do
		s=$(date +%s.%N)
		echo "S $s" >>"$2"
		(echo "E $s $(curl -sf -H 'Accept-Encoding: gzip' -o /dev/null -w '%{time_total}' "$1" || echo fail)" >>"$2") &
		sleep 5
	done
}
# window FILE FROM TO: the times of the GETs started from FROM to TO.
window() { awk -v a="$2" -v b="$3" '$1 == "E" && $2 >= a && $2 < b { print $3 }' "$1"; }
# pending FILE TO: how many GETs started before TO have not ended.
pending() { awk -v b="$2" '$2 < b { n += ($1 == "S") - ($1 == "E") } END { print n + 0 }' "$1"; }
series() { curl -sf "$1" | grep -vc '^#' || true; }

start_collector() {
	(
		as_unit ERNIC_RUN_DIR="$dir/run" ERNIC_MEMORY_LIMIT_MIB=4096 \
			"$otelcol" --config config/local.yaml --config "$dir/common.yaml" --config "$dir/pull.yaml" \
			>"$rdir/collector.log" 2>&1
	) &
	cpid=$!
	wait_listen "$port" "$cpid" "$rdir/collector.log"
	get_loop "http://127.0.0.1:$port/metrics" "$rdir/collector.get" &
	cloop=$!
}
start_legacy() {
	ERNIC_RUN_DIR="$dir/run" ERNIC_EXPORTER_PORT=$lport "$python" "$legacy" >"$rdir/legacy.log" 2>&1 &
	lpid=$!
	wait_listen "$lport" "$lpid" "$rdir/legacy.log"
	get_loop "http://127.0.0.1:$lport/metrics" "$rdir/legacy.get" &
	lloop=$!
}

scrape_yaml >"$dir/common.yaml"
pull_yaml "$port" >"$dir/pull.yaml"

echo "bench-legacy: collector $otelcol (${unit_env[*]}${unit_slack:+ TimerSlackNSec=$unit_slack}), legacy $python $legacy"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uptime | sed 's/.*load average/load average/'), WARMUP $warmup s, WINDOW $window s, a GET of each every 5 s"
fail=0
summary=()
for size in $sizes; do
	n=$(rounds "$size")
	rm -rf "$dir/run"
	"$sim" -run-dir "$dir/run" -instances "${size%x*}" -qps "${size#*x}" -writes 6 >"$dir/sim.log" 2>&1 &
	simpid=$!
	sleep 7
	echo
	echo "## $size ($n rounds)"
	echo
	echo "| round | first | series C / L | C CPU s/min | L CPU s/min | CPU C/L | C RSS MiB | L RSS MiB | RSS C/L | C GET s med / max | L GET s med / max | GET C/L | load |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	cpu_r=() rss_r=() get_r=() c_cpu=() l_cpu=() c_rss=() l_rss=() c_get=() l_get=()
	for ((r = 1; r <= n; r++)); do
		rdir=$out/$size-$r
		rm -rf "$rdir"
		mkdir -p "$rdir"
		first=collector
		((r % 2)) || first=legacy
		if [[ $first == collector ]]; then
			start_collector
			sleep 2.5
			start_legacy
		else
			start_legacy
			sleep 2.5
			start_collector
		fi
		sleep "$warmup"
		sc=$(series "http://127.0.0.1:$port/metrics") sl=$(series "http://127.0.0.1:$lport/metrics")
		cc=$(cpu_ns "$cpid") cl=$(cpu_ns "$lpid") w0=$(date +%s.%N)
		sleep "$window"
		cc=$(($(cpu_ns "$cpid") - cc)) cl=$(($(cpu_ns "$lpid") - cl)) w1=$(date +%s.%N)
		rc=$(rss_kib "$cpid") rl=$(rss_kib "$lpid")
		load=$(awk '{ print $1 }' /proc/loadavg)
		# The GETs started in the window, the last ones given up to 30 s to
		# end; then both stop.
		for ((i = 0; i < 300; i++)); do
			(($(pending "$rdir/collector.get" "$w1") + $(pending "$rdir/legacy.get" "$w1") == 0)) && break
			sleep 0.1
		done
		kill "$cloop" "$lloop" 2>/dev/null || true
		wait "$cloop" "$lloop" 2>/dev/null || true
		window "$rdir/collector.get" "$w0" "$w1" >"$rdir/collector.window"
		window "$rdir/legacy.get" "$w0" "$w1" >"$rdir/legacy.window"
		for f in collector legacy; do
			if grep -q fail "$rdir/$f.window"; then
				echo "bench-legacy: $size round $r: $(grep -c fail "$rdir/$f.window") GET(s) of the $f failed"
				fail=1
			fi
		done
		# SIGKILL for the legacy exporter: its SIGTERM handler calls
		# HTTPServer.shutdown() in the thread that runs serve_forever(),
		# which then waits for itself (systemd ends it with SIGKILL after
		# its stop timeout).
		kill "$cpid" 2>/dev/null || true
		kill -KILL "$lpid" 2>/dev/null || true
		wait "$cpid" "$lpid" 2>/dev/null || true
		gcm=$(awk '!/fail/' "$rdir/collector.window" | median) gcx=$(awk '!/fail/' "$rdir/collector.window" | sort -g | tail -1)
		glm=$(awk '!/fail/' "$rdir/legacy.window" | median) glx=$(awk '!/fail/' "$rdir/legacy.window" | sort -g | tail -1)
		row=$(awk -v cc="$cc" -v cl="$cl" -v rc="$rc" -v rl="$rl" -v gcm="$gcm" -v glm="$glm" -v w="$window" \
			'BEGIN { printf "%.3f %.3f %.4f %.1f %.1f %.3f %.4f", cc / 1e9 * 60 / w, cl / 1e9 * 60 / w, cc / cl, rc / 1024, rl / 1024, rc / rl, gcm / glm }')
		read -r ccm clm cr rcm rlm rr gr <<<"$row"
		cpu_r+=("$cr") rss_r+=("$rr") get_r+=("$gr") c_cpu+=("$ccm") l_cpu+=("$clm") c_rss+=("$rcm") l_rss+=("$rlm") c_get+=("$gcm") l_get+=("$glm")
		printf '| %d | %s | %s / %s | %s | %s | %s | %s | %s | %s | %.3f / %.3f | %.3f / %.3f | %s | %s |\n' \
			"$r" "$first" "$sc" "$sl" "$ccm" "$clm" "$cr" "$rcm" "$rlm" "$rr" "$gcm" "$gcx" "$glm" "$glx" "$gr" "$load"
		if [[ $size == 16x64 ]] && awk -v r="$cr" -v m="$max_ratio" 'BEGIN { exit !(r > m) }'; then
			echo "FAIL: 16x64 round $r: the collector used $cr of the legacy exporter's CPU (goal: at most $max_ratio)"
			fail=1
		fi
	done
	kill "$simpid" 2>/dev/null || true
	wait "$simpid" 2>/dev/null || true
	echo
	line=$(printf '%s: CPU C/L median %s (%s), RSS C/L %s (%s), GET C/L %s (%s); CPU s/min C %s L %s, RSS MiB C %s L %s, GET s C %s L %s (medians of %d rounds)' \
		"$size" \
		"$(printf '%s\n' "${cpu_r[@]}" | median)" "$(printf '%s\n' "${cpu_r[@]}" | spread)" \
		"$(printf '%s\n' "${rss_r[@]}" | median)" "$(printf '%s\n' "${rss_r[@]}" | spread)" \
		"$(printf '%s\n' "${get_r[@]}" | median)" "$(printf '%s\n' "${get_r[@]}" | spread)" \
		"$(printf '%s\n' "${c_cpu[@]}" | median)" "$(printf '%s\n' "${l_cpu[@]}" | median)" \
		"$(printf '%s\n' "${c_rss[@]}" | median)" "$(printf '%s\n' "${l_rss[@]}" | median)" \
		"$(printf '%s\n' "${c_get[@]}" | median)" "$(printf '%s\n' "${l_get[@]}" | median)" "$n")
	echo "$line"
	summary+=("$line")
done

echo
echo "## Summary (collector / legacy: median (min-max) of the rounds)"
echo
printf '%s\n' "${summary[@]}"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uptime | sed 's/.*load average/load average/')"
if ((fail)); then
	echo "bench-legacy: FAIL (above)"
	exit 1
fi

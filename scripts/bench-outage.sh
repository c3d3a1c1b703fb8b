#!/usr/bin/env bash
# What a remote-write outage costs (`make bench-outage`): the collector with
# config/prometheus-remote-write.yaml writes to a port where nothing listens
# for OUTAGE seconds, on ernic-sim's static run directory of SIZE (instances
# x QPs) with 5 s scrapes; the script prints the collector's RSS (anonymous
# and mapped files apart) and the state directory's size every minute. Then a Prometheus (PROMETHEUS_BIN or
# `prometheus` on PATH) starts on that port, and the script prints how long
# the backlog took to deliver and the collector's lines about the outage
# (the warnings, the drops at the bound, "delivers again", "backlog
# delivered").
#
# Environment: OTELCOL, SIM (binaries; set by the Makefile), SIZE (default
# 16x64), OUTAGE (default 3600), ERNIC_BUFFER_MAX_BYTES (the bound; default
# the config's 256 MiB), PORT (default 19940; it and the next one must be
# free on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
sim=${SIM:-bin/ernic-sim}
size=${SIZE:-16x64}
outage=${OUTAGE:-3600}
port=${PORT:-19940}
prometheus=${PROMETHEUS_BIN:-prometheus}

dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-outage.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$sim" -run-dir "$dir/run" -instances "${size%x*}" -qps "${size#*x}" -writes 6 >/dev/null 2>&1 &
pids+=($!)
sleep 7
printf 'receivers:\n  ernic:\n    max_qps_per_instance: 0\n' >"$dir/over.yaml"
env ERNIC_RUN_DIR="$dir/run" ERNIC_STATE_DIR="$dir/state" ERNIC_MEMORY_LIMIT_MIB=4096 \
	ERNIC_REMOTE_WRITE_URL="http://127.0.0.1:$port/api/v1/write" \
	"$otelcol" --config config/prometheus-remote-write.yaml --config "$dir/over.yaml" >"$dir/col.log" 2>&1 &
col=$!
pids+=("$col")
echo "| minute | RSS MiB | of which anonymous | of which mapped files | state directory MiB |"
echo "|---|---|---|---|---|"
for ((m = 0; m * 60 < outage; m++)); do
	sleep $((outage - m * 60 < 60 ? outage - m * 60 : 60))
	# RssFile is mostly the queue's bbolt file, which bbolt maps: clean
	# page-cache pages the kernel can take back.
	rss=$(awk '/^(VmRSS|RssAnon|RssFile):/ { printf "%.1f | ", $2 / 1024 }' "/proc/$col/status")
	state=$(du -sm "$dir/state" | cut -f1)
	echo "| $((m + 1)) | $rss$state |"
done
mkdir -p "$dir/prom"
printf 'global:\n  scrape_interval: 1h\nscrape_configs: []\n' >"$dir/prom.yml"
up=$(date +%s.%N)
"$prometheus" --config.file="$dir/prom.yml" --storage.tsdb.path="$dir/prom" --web.listen-address="127.0.0.1:$port" \
	--web.enable-remote-write-receiver --storage.tsdb.retention.time=1d >"$dir/prom.log" 2>&1 &
pids+=($!)
until grep -q 'backlog delivered' "$dir/col.log"; do
	sleep 1
	if (($(date +%s) - ${up%.*} > 1800)); then
		echo "the backlog was not delivered within 30 minutes" >&2
		break
	fi
done
awk -v up="$up" -v now="$(date +%s.%N)" 'BEGIN { printf "backlog delivered %.1f s after Prometheus started\n", now - up }'
grep -E 'Remote write|Rejecting|Refusing|Dropping' "$dir/col.log" | sed -E 's/\{"resource": \{[^}]*\}, //' | cut -c1-400
echo "out-of-order lines in Prometheus' log: $(grep -c 'Out of order' "$dir/prom.log" || true)"

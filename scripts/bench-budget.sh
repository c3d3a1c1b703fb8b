#!/usr/bin/env bash
# The series budget of each shipped pipeline (`make bench-budget`): for each
# SIZE of SIZES (instances x QPs of the simulator), six collectors at the
# same time on one run directory, each shipped push configuration (prw:
# config/prometheus-remote-write.yaml into a Prometheus; otlp, otlphttp:
# config/otlp.yaml, config/otlphttp.yaml into a second collector) alone
# and with config/fleet.yaml after it. After WARMUP seconds it reads each
# collector's own telemetry (level detailed, a pull reader on loopback)
# twice, WINDOW seconds apart, and counts the series in the Prometheus:
#   series       count({__name__=~"ernic_.+"}) of the remote-write
#                collector's instance; the OTLP collectors send the same data
#                points (one receiver, the same processors)
#   samples/s    series / 5 (one sample a series a 5 s scrape)
#   bytes/sample over the window, otelcol_exporter_enqueue_size_bytes
#                over otelcol_exporter_enqueue_size (data points) of the
#                exporter, both counted as a request is stored: the
#                requests it stores in its queue and sends as they are,
#                compressed (remote write snappy, OTLP/gRPC zstd,
#                OTLP/HTTP gzip; for the two HTTP ones the same as the HTTP
#                client's http_client_request_body_size). A ratio of what
#                was stored together, so neither a window that cuts a
#                scrape nor a send lagging behind skews it.
#   bytes/s      bytes/sample x samples/s
# and from the fleet collectors' local endpoint the series it serves
# (curl | grep -c '^ernic_') and the bytes of one GET (gzip and plain).
# Prints a table row per size and pipeline.
#
# Environment: SIZES (default "16x64 64x256 64x1024"), WARMUP (default 40),
# WINDOW (default 30), PORT (default 19800; it and the next 30 must be free
# on 127.0.0.1), PROMETHEUS_BIN (default prometheus on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
# The OTLP backend needs the OTLP receiver: the test build (make otelcol-test).
otelcol_test=${OTELCOL_TEST:-build/otelcol-ernic-test/otelcol-ernic-test}
sim=${SIM:-bin/ernic-sim}
sizes=${SIZES:-16x64 64x256 64x1024}
warmup=${WARMUP:-40}
window=${WINDOW:-30}
port=${PORT:-19800}
prometheus=${PROMETHEUS_BIN:-prometheus}

# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
load_unit_env
dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-budget.XXXXXX")
declare -A pts0 bytes0
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

mkdir "$dir/prom"
prometheus_yaml >"$dir/prom.yml"
"$prometheus" --config.file="$dir/prom.yml" --storage.tsdb.path="$dir/prom" \
	--web.listen-address="127.0.0.1:$port" --web.enable-remote-write-receiver >"$dir/prom.log" 2>&1 &
otlp_backend_yaml grpc 127.0.0.1:$((port + 1)) http 127.0.0.1:$((port + 2)) >"$dir/second.yaml"
"$otelcol_test" --config "$dir/second.yaml" >"$dir/second.log" 2>&1 &
otlp_insecure_yaml >"$dir/otlp-insecure.yaml"
scrape_yaml >"$dir/common.yaml"
sleep 5

echo "| size | pipeline | profile | series pushed | samples/s | bytes/sample | request bytes/s | local endpoint series | GET bytes gzip / plain |"
echo "|---|---|---|---|---|---|---|---|---|"
for size in $sizes; do
	"$sim" -run-dir "$dir/run" -instances "${size%x*}" -qps "${size#*x}" -writes 6 >/dev/null 2>&1 &
	simpid=$!
	sleep 3
	pids=() names=()
	i=0
	for pipe in prw otlp otlphttp; do
		for profile in plain fleet; do
			name=$pipe-$profile tel=$((port + 10 + i)) local=$((port + 20 + i))
			case $pipe in
			prw) configs=(--config config/prometheus-remote-write.yaml --config "$dir/common.yaml") exporter=remote_write ;;
			otlp) configs=(--config config/otlp.yaml --config "$dir/common.yaml" --config "$dir/otlp-insecure.yaml") exporter=otlp_durable ;;
			otlphttp) configs=(--config config/otlphttp.yaml --config "$dir/common.yaml") exporter=otlp_http_durable ;;
			esac
			[[ $profile == plain ]] || configs+=(--config config/fleet.yaml)
			telemetry_yaml "$tel" >"$dir/$name.tel.yaml"
			configs+=(--config "$dir/$name.tel.yaml")
			endpoint=127.0.0.1:$((port + 1))
			[[ $pipe != otlphttp ]] || endpoint=http://127.0.0.1:$((port + 2))
			(
				as_unit ERNIC_HOST="$name-$size" ERNIC_RUN_DIR="$dir/run" ERNIC_STATE_DIR="$dir/$name/state" \
					ERNIC_MEMORY_LIMIT_MIB=4096 ERNIC_REMOTE_WRITE_URL="http://127.0.0.1:$port/api/v1/write" \
					ERNIC_OTLP_ENDPOINT="$endpoint" ERNIC_EXPORTER_PORT="$local" \
					"$otelcol" "${configs[@]}" >"$dir/$name.log" 2>&1
			) &
			pids+=($!) names+=("$name $pipe $profile $exporter $tel $local")
			i=$((i + 1))
		done
	done
	sleep "$warmup"
	pts0=() bytes0=()
	for n in "${names[@]}"; do
		read -r name _ _ exporter tel _ <<<"$n"
		pts0[$name]=$(counter "$tel" otelcol_exporter_enqueue_size_sum "$exporter")
		bytes0[$name]=$(counter "$tel" otelcol_exporter_enqueue_size_bytes_sum "$exporter")
	done
	sleep "$window"
	declare -A series=()
	for profile in plain fleet; do
		series[$profile]=$(curl -s "127.0.0.1:$port/api/v1/query" --data-urlencode \
			"query=count({__name__=~\"ernic_.+\", instance=\"prw-$profile-$size\"})" | sed -n 's/.*"value":\[[^,]*,"\([0-9]*\)".*/\1/p')
	done
	for n in "${names[@]}"; do
		read -r name pipe profile exporter tel local <<<"$n"
		pts=$(($(counter "$tel" otelcol_exporter_enqueue_size_sum "$exporter") - ${pts0[$name]}))
		bytes=$(($(counter "$tel" otelcol_exporter_enqueue_size_bytes_sum "$exporter") - ${bytes0[$name]}))
		if grep -q 'Exporting failed' "$dir/$name.log"; then
			echo "bench-budget: $name failed to export:" >&2
			grep -m 3 'Exporting failed' "$dir/$name.log" >&2
			exit 1
		fi
		served=- get=-
		if [[ $profile == fleet ]]; then
			served=$(curl -s "127.0.0.1:$local/metrics" | grep -c '^ernic_')
			get="$(curl -s -H 'Accept-Encoding: gzip' "127.0.0.1:$local/metrics" | wc -c) / $(curl -s "127.0.0.1:$local/metrics" | wc -c)"
		fi
		awk -v s="$size" -v p="$pipe" -v f="$profile" -v n="$pts" -v b="$bytes" -v k="${series[$profile]}" -v l="$served" -v g="$get" \
			'BEGIN { printf "| %s | %s | %s | %d | %.0f | %.2f | %.0f | %s | %s |\n", s, p, f, k, k / 5, (n ? b / n : 0), (n ? b / n : 0) * k / 5, l, g }'
	done
	kill "${pids[@]}" "$simpid" 2>/dev/null || true
	wait "${pids[@]}" "$simpid" 2>/dev/null || true
	rm -rf "$dir/run" "$dir"/*-*/state
done

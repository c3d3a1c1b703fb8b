#!/usr/bin/env bash
# Shared by scripts/bench-e2e.sh, bench-pair.sh and bench-legacy.sh (sourced from the
# repository's root): how a measured collector is started as the systemd
# unit starts it, what is read from /proc, and the config files they write.

# load_unit_env: unit_env (the unit's Environment= lines: GOMAXPROCS=1,
# GOMEMLIMIT) and unit_slack (its TimerSlackNSec=) from
# deploy/otelcol-ernic.service.
load_unit_env() {
	mapfile -t unit_env < <(sed -n 's/^Environment=//p' deploy/otelcol-ernic.service)
	unit_slack=$(sed -n 's/^TimerSlackNSec=//p' deploy/otelcol-ernic.service)
}
unit_env=()
unit_slack=

# as_unit COMMAND...: execs COMMAND with unit_env and unit_slack (the
# timer slack a process' threads inherit), as systemd gives them; run it in
# a subshell, ( as_unit ... ) &, so that $! is the command's PID.
as_unit() {
	[[ -z $unit_slack ]] || echo "$unit_slack" >/proc/self/timerslack_ns
	exec env "${unit_env[@]}" "$@"
}

# cpu_ns PID: the nanoseconds the process's threads ran, from their
# schedstat (the scheduler's clock). The clock ticks of /proc/PID/stat are
# sampled at each timer tick: a process that wakes briefly, as the
# collector does between scrapes, is charged whole ticks or none depending
# on how its wakeups fall against the tick, which swung the same binary's
# figure by 2-4x from run to run at 16x64. Go does not end its threads, so
# the sum over the live ones is the process's.
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# anon_kib PID: the anonymous part of RSS (the rest is mapped files: the
# binary, and for the push pipelines bbolt's mapped queue file).
anon_kib() { awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"; }
# minflt PID: the process's minor page faults so far.
minflt() { awk '{ print $10 }' "/proc/$1/stat"; }

# The config files. scrape_yaml: the receiver as measured (5 s scrapes,
# every QP published).
scrape_yaml() { printf 'receivers:\n  ernic:\n    collection_interval: 5s\n    max_qps_per_instance: 0\n'; }
# pull_yaml PORT: the pull endpoint on PORT, the health check on PORT+1.
pull_yaml() {
	printf 'exporters:\n  prometheus_text:\n    endpoint: 127.0.0.1:%d\nextensions:\n  healthcheckv2:\n    http:\n      endpoint: 127.0.0.1:%d\n' "$1" $(($1 + 1))
}
# prometheus_yaml: a Prometheus that scrapes nothing (a remote-write
# receiver only).
prometheus_yaml() { printf 'global:\n  scrape_interval: 1h\nscrape_configs: []\n'; }
# otlp_backend_yaml PROTOCOLS: the second collector, an OTLP receiver with
# PROTOCOLS ("grpc 127.0.0.1:P", "http 127.0.0.1:P" or both, one after the
# other) into a debug exporter.
otlp_backend_yaml() {
	printf 'receivers:\n  otlp:\n    protocols:\n'
	while (($# >= 2)); do
		printf '      %s:\n        endpoint: %s\n' "$1" "$2"
		shift 2
	done
	printf 'exporters:\n  debug:\n    verbosity: basic\nservice:\n  pipelines:\n    metrics:\n      receivers: [otlp]\n      exporters: [debug]\n  telemetry:\n    metrics:\n      level: none\n'
}
# otlp_insecure_yaml: config/otlp.yaml's exporter without TLS, for a
# loopback backend.
otlp_insecure_yaml() { printf 'exporters:\n  otlp_durable:\n    tls:\n      insecure: true\n'; }

# telemetry_yaml PORT: the collector's own metrics, detailed (the queue's
# bytes), on 127.0.0.1:PORT.
telemetry_yaml() {
	printf 'service:\n  telemetry:\n    metrics:\n      level: detailed\n      readers:\n        - pull:\n            exporter:\n              prometheus:\n                host: 127.0.0.1\n                port: %d\n' "$1"
}
# counter PORT NAME EXPORTER: the sum of a collector's series NAME (those
# of EXPORTER, when given).
counter() {
	curl -s "127.0.0.1:$1/metrics" | awk -v n="$2" -v e="${3:-}" '
		$1 ~ "^" n "([{]|$)" && (e == "" || index($1, "exporter=\"" e "\"")) { s += $NF }
		END { printf "%.0f\n", s }'
}

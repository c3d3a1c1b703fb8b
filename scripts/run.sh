#!/usr/bin/env bash
# Runs the collector with config/local.yaml in the foreground (`make run`).
#
# With ERNIC_RUN_DIR set, the collector reads that run directory and nothing
# else is started. Without it, a temporary run directory is created, the
# simulator (bin/ernic-sim) writes into it in the background, and it is
# stopped (and the directory removed) when the collector exits.
#
# Environment: OTELCOL, SIM (binaries; set by the Makefile),
# ERNIC_RUN_DIR, ERNIC_EXPORTER_PORT (default 9840), ERNIC_HEALTH_PORT
# (default 13133), SIM_FLAGS (extra simulator flags, e.g.
# "-instances 4 -qps 16"), and the systemd unit's Environment= variables
# (GOMAXPROCS, GOMEMLIMIT: the unit's values unless set); the collector also
# gets the unit's timer slack (TimerSlackNSec=).
set -euo pipefail

cd "$(dirname "$0")/.."

# port_taken PORT: whether something listens on TCP PORT (any address).
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "ERNIC_EXPORTER_PORT ${ERNIC_EXPORTER_PORT:-9840} the Prometheus endpoint" \
	"ERNIC_HEALTH_PORT ${ERNIC_HEALTH_PORT:-13133} the health check"; do
	read -r var port what <<<"$p"
	if port_taken "$port"; then
		echo "make run: port $port ($what) is taken; choose another with $var=<port> make run" >&2
		exit 1
	fi
done
otelcol=${OTELCOL:-build/otelcol-ernic/otelcol-ernic}
extra_config=()
sim=${SIM:-bin/ernic-sim}

if [[ -z "${ERNIC_RUN_DIR:-}" ]]; then
	run_dir=$(mktemp -d "${TMPDIR:-/tmp}/ernic-run.XXXXXX")
	# shellcheck disable=SC2086 # SIM_FLAGS is a list of flags
	"$sim" -run-dir "$run_dir" -instances 3 -qps 8 -interval 1s ${SIM_FLAGS:-} &
	sim_pid=$!
	stop_sim() {
		kill -TERM "$sim_pid" 2>/dev/null || true
		wait "$sim_pid" 2>/dev/null || true
		rm -rf "$run_dir"
	}
	trap stop_sim EXIT
	export ERNIC_RUN_DIR=$run_dir
	echo "Simulator (pid $sim_pid) writing $ERNIC_RUN_DIR"
	# On the simulator, show every family, the per-opcode one (off by
	# default for its cardinality) included.
	extra_config=(--config "yaml:receivers::ernic::metrics::ernic.qp.wqes.by_opcode::enabled: true")
fi

# The systemd unit's runtime settings (GOMAXPROCS=1, GOMEMLIMIT), so that
# the collector runs as the installed service does; a variable already set
# in the environment wins.
while IFS='=' read -r name value; do
	[[ -n ${!name:-} ]] || export "$name=$value"
	echo "$name=${!name}"
done < <(sed -n 's/^Environment=//p' deploy/otelcol-ernic.service)
# And its timer slack (TimerSlackNSec=), which the collector inherits from
# this shell, as systemd gives it to the service.
slack=$(sed -n 's/^TimerSlackNSec=//p' deploy/otelcol-ernic.service)
if [[ -n $slack ]] && echo "$slack" 2>/dev/null >/proc/self/timerslack_ns; then
	echo "timer slack: $slack ns"
fi
echo "Run directory: $ERNIC_RUN_DIR"
echo "Metrics: curl localhost:${ERNIC_EXPORTER_PORT:-9840}/metrics"
echo "Health: curl '127.0.0.1:${ERNIC_HEALTH_PORT:-13133}/status?verbose'"
# Not exec: the EXIT trap must stop the simulator after the collector exits.
# In the background, so that a SIGINT or SIGTERM sent to this script alone is
# forwarded to the collector at once (bash runs traps only between commands).
"$otelcol" --config config/local.yaml --config config/debug.yaml "${extra_config[@]}" &
collector=$!
trap 'kill -TERM "$collector" 2>/dev/null || true' INT TERM
status=0
while kill -0 "$collector" 2>/dev/null; do
	wait "$collector" || status=$?
done
exit "$status"

#!/usr/bin/env bash
# Writes the ocb manifest of a build variant of the distribution to stdout:
# builder-config.yaml under another name (and so another output path,
# build/NAME/NAME), plus extra components. The shipped manifest stays the one
# source of the components the variants share; a variant only names what it
# adds (the Makefile's otelcol-test and otelcol-pprof).
#
#   scripts/derive-manifest.sh NAME [SECTION=MODULE@VERSION]...
#
# SECTION is a top-level list of the manifest (receivers, exporters,
# processors, extensions); the components are added at the head of that list,
# in the order given.
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# < 1)); then
	echo "usage: $0 NAME [SECTION=MODULE@VERSION]..." >&2
	exit 2
fi
name=$1
shift
# The dist name, and the module path and output path, which both end in
# build/otelcol-ernic.
sed_args=(-e "s|^  name: otelcol-ernic\$|  name: $name|" -e "s|build/otelcol-ernic\$|build/$name|")
for c in "$@"; do
	section=${c%%=*} mod=${c#*=}
	if [[ $section == "$c" || $mod != *@* ]]; then
		echo "$0: $c is not SECTION=MODULE@VERSION" >&2
		exit 2
	fi
	if ! grep -q "^$section:\$" builder-config.yaml; then
		echo "$0: builder-config.yaml has no $section: list" >&2
		exit 2
	fi
	sed_args+=(-e "/^$section:\$/a\\  - gomod: ${mod%@*} ${mod##*@}")
done
sed "${sed_args[@]}" builder-config.yaml

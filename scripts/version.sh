#!/bin/sh
# Copyright The otelcol-ernic Authors
# SPDX-License-Identifier: Apache-2.0
#
# version.sh: the version of otelcol-ernic, from git, as a semantic version.
# The Makefile puts it in the binary (`otelcol-ernic --version`, the
# service.version of its telemetry) and the packages; nfpm turns its
# pre-release part into Debian's and RPM's `~`, so upgrades order right.
#
#   on a tag vX.Y.Z:          X.Y.Z
#   N commits after vX.Y.Z:   X.Y.(Z+1)-dev.N+gHASH  (a pre-release of the next)
#   no tag (N commits):       BASE-dev.N+gHASH       (BASE: dist.version of builder-config.yaml)
#   uncommitted changes:      ".dirty" added to the build metadata
#   no git:                   BASE-dev.0+unknown
#
# `version.sh --deb` prints the Debian form (the first "-" as "~").
set -eu

cd "$(dirname "$0")/.."

base=$(sed -n 's/^  version: *\([0-9][0-9.]*\) *$/\1/p' builder-config.yaml)
[ -n "$base" ] || { echo "version.sh: no dist.version in builder-config.yaml" >&2; exit 1; }

if ! git rev-parse --git-dir >/dev/null 2>&1; then
	v="$base-dev.0+unknown"
else
	hash=$(git rev-parse --short=7 HEAD)
	dirty=
	# Refresh the index first: files merely touched are not changes.
	git update-index -q --refresh >/dev/null 2>&1 || true
	git diff-index --quiet HEAD -- || dirty=.dirty
	if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null); then
		n=$(git rev-list --count "$tag..HEAD")
		tagged=${tag#v}
		if [ "$n" = 0 ]; then
			v=$tagged${dirty:++dirty}
		else
			# X.Y.Z -> X.Y.(Z+1): the next patch release, not yet made.
			next=$(echo "$tagged" | awk -F. '{ printf "%d.%d.%d", $1, $2, $3 + 1 }')
			v=$next-dev.$n+g$hash$dirty
		fi
	else
		v=$base-dev.$(git rev-list --count HEAD)+g$hash$dirty
	fi
fi

case "${1:-}" in
--deb) echo "$v" | sed 's/-/~/' ;;
'') echo "$v" ;;
*) echo "usage: version.sh [--deb]" >&2; exit 2 ;;
esac

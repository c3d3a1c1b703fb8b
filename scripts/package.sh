#!/bin/sh
# package.sh ARCH...: the otelcol-ernic .deb and .rpm of each architecture
# into $DIST (default build/dist), made by nfpm ($NFPM) from
# packaging/nfpm.yaml, for version $VERSION (scripts/version.sh). `make
# package` runs it once build/package/<arch>/otelcol-ernic are built.
#
# What is generated here, from one source each: the unit (deploy/'s, with the
# packaged binary path), the gzipped man page and the Debian changelog.
set -eu
cd "$(dirname "$0")/.."

: "${VERSION:?VERSION is not set (scripts/version.sh)}"
NFPM=${NFPM:-bin/nfpm}
DIST=${DIST:-build/dist}
MAINTAINER=${MAINTAINER:-otelcol-ernic maintainers <otelcol-ernic@rocm-ernic.example>}
# File times in the packages: the commit's, so that a package built twice
# from one commit is the same.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export VERSION MAINTAINER SOURCE_DATE_EPOCH

mkdir -p build/package "$DIST"

unit=build/package/otelcol-ernic.service
sed -e 's|/usr/local/bin/otelcol-ernic|/usr/bin/otelcol-ernic|g' \
	-e 's|Installed by `make install`|Installed by the otelcol-ernic package|' \
	deploy/otelcol-ernic.service >"$unit"
want='ExecStart=/usr/bin/otelcol-ernic --config /etc/otelcol-ernic/config.yaml'
grep -qxF "$want" "$unit" || { echo "package.sh: no '$want' in $unit" >&2; exit 1; }

gzip -9n <packaging/otelcol-ernic.1 >build/package/otelcol-ernic.1.gz

# Debian's changelog: one entry for this version (nfpm writes the rpm's).
debversion=$(echo "$VERSION" | sed 's/-/~/')-$(sed -n 's/^release: "\(.*\)"$/\1/p' packaging/nfpm.yaml)
commit=$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
{
	printf 'otelcol-ernic (%s) unstable; urgency=medium\n\n' "$debversion"
	printf '  * Built from commit %s of otelcol-ernic.\n\n' "$commit"
	printf ' -- %s  %s\n' "$MAINTAINER" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >build/package/changelog.Debian.gz

for arch in "$@"; do
	for packager in deb rpm; do
		ARCH=$arch "$NFPM" package --config packaging/nfpm.yaml --packager "$packager" --target "$DIST/"
	done
done
ls -l "$DIST"

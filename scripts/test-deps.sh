#!/usr/bin/env bash
# Installs what `make test` needs beyond Go, when it is missing (called by
# the Makefile's test-deps target; nothing happens when all is there):
#   prometheus, promtool   Debian's Prometheus 2.42: the remote-write tests
#                          of test/e2e start their own servers, and
#                          test/dashboards checks the rules and PromQL
#   prometheus-node-exporter  the dashboard's VM row (test/e2e TestVMRow)
#   ip (iproute2), unshare (util-linux)  network and UTS namespaces of the
#                          VM-row and fleet tests
#   systemd-analyze        test/deploy (verify, security); systemd need not run
#   dpkg-deb, lintian, rpm test/package: the .deb's contents, lintian, the .rpm's
#   debootstrap, systemd-nspawn (systemd-container)  test/switch: a Debian
#                          root made once (make debian-root) and booted
# As root it installs the Debian packages; otherwise it names them and
# exits 1. Prometheus 3 (the fleet test) is built by the Makefile itself.
set -euo pipefail

missing=()
need() { command -v "$1" >/dev/null || missing+=("$2"); }
need prometheus prometheus
need promtool prometheus
need prometheus-node-exporter prometheus-node-exporter
need ip iproute2
need unshare util-linux
need systemd-analyze systemd
need dpkg-deb dpkg
need lintian lintian
need rpm rpm
need debootstrap debootstrap
need systemd-nspawn systemd-container
[[ ${#missing[@]} -eq 0 ]] && exit 0

# One name once.
mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
if [[ $(id -u) -ne 0 ]]; then
	echo "make test needs these Debian packages: ${pkgs[*]}" >&2
	echo "install them as root (apt-get install ${pkgs[*]}) or run make test as root" >&2
	exit 1
fi
echo "make test: installing ${pkgs[*]} (Debian packages)" >&2
# policy-rc.d keeps the packages' postinst from starting their services
# (it would run the init scripts, without systemd); one already in place
# (container images have one) is kept.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 0755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}"

#!/bin/sh
# debian-root.sh DIR: a minimal Debian bookworm root with systemd, which
# systemd-nspawn --boot can boot, made once with debootstrap from the Debian
# mirror (MIRROR) for the switch-over test (test/switch). `make debian-root`
# runs it when DIR is missing; the test boots a copy-on-write copy, so DIR
# stays as debootstrap left it. Needs root, debootstrap and the network.
set -eu

dir=${1:?usage: debian-root.sh DIR}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=${SUITE:-bookworm}

[ -e "$dir" ] && { echo "debian-root.sh: $dir exists; remove it to make it again" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "debian-root.sh: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debian-root.sh: no debootstrap (apt-get install debootstrap; make test-deps)" >&2; exit 1; }

# Made next to DIR and renamed at the end: an interrupted run leaves no
# half-made root behind under DIR's name.
tmp=$dir.tmp
rm -rf "$tmp"
mkdir -p "$(dirname "$dir")"
# minbase plus what a booted container needs: systemd as init
# (systemd-sysv), D-Bus for systemctl's queries, and the tools
# deb-systemd-helper and deb-systemd-invoke come with (init-system-helpers).
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus "$SUITE" "$tmp" "$MIRROR"
# The container shares the host's network: nothing in it may configure
# that network, so systemd-networkd is masked (Debian's presets enable it
# on a first boot).
for u in systemd-networkd.service systemd-networkd.socket systemd-networkd-wait-online.service; do
	ln -sf /dev/null "$tmp/etc/systemd/system/$u"
done
echo switch-test >"$tmp/etc/hostname"
rm -rf "$tmp/var/cache/apt/archives/"*.deb "$tmp/var/lib/apt/lists/"*
mv "$tmp" "$dir"
echo "debian-root.sh: $dir ($(du -sh "$dir" | cut -f1))"

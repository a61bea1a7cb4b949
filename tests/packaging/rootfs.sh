#!/bin/bash
# Make (once) a Debian root file system with systemd, DKMS and Debian's
# stock kernel headers, cached outside the repo; print its path.
#
#   tests/packaging/rootfs.sh [SUITE [SET]]  build if needed, print the directory
#
# SUITE: bookworm (Debian 12, the default: dkms 3.0.10, headers 6.1) or
# trixie (Debian 13: dkms 3.2.2, headers 6.12). SET: dkms (the default:
# the packages below), lintian (apt and lintian: the suite's lintian for
# its packages) or cloud (a stock cloud host's base: systemd, udev, kmod,
# python3, gpgv, no compiler: what installing mmtune pulls in).
# Cache: $MMTUNE_CACHE/rootfs/SUITE[-SET]-<key>/root, key = the suite, the
# mirrors, the package list and the mmdebstrap options; the two most
# recently used roots of each suite are kept. Callers copy it; nobody
# changes the cached tree.
set -euo pipefail

suite=${1:-bookworm} set=${2:-dkms}
case $suite/$set in
bookworm/dkms|trixie/dkms|bookworm/lintian|trixie/lintian|bookworm/cloud|trixie/cloud) ;;
*) echo "usage: $0 [bookworm|trixie [dkms|lintian|cloud]]" >&2; exit 2 ;;
esac
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
mirror=${MMTUNE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${MMTUNE_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
keep=${MMTUNE_KEEP_ROOTFS:-2}

# systemd as init, what DKMS needs to build (and sign: openssl), python3 for
# mmtunectl, and linux-headers-amd64: Debian's stock headers, against which
# mmtune-dkms must decline.
pkgs=systemd,systemd-sysv,udev,kmod,dkms,make,gcc,libc6-dev,openssl,python3,linux-headers-amd64,e2fsprogs,procps
variant=minbase
case $set in
lintian) pkgs=lintian variant=apt ;;
cloud) pkgs=systemd,systemd-sysv,udev,kmod,python3,gpgv variant=apt ;;
esac
name=$suite
[ "$set" = dkms ] || name=$suite-$set

log() { echo "rootfs: $*" >&2; }
die() { log "error: $*"; exit 1; }
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (scripts/setup-host.sh)"

# The key covers what goes into the root, not this script's comments.
mmdebstrap_opts=(--variant=$variant --mode=root
	--aptopt='APT::Install-Recommends "false"'
	--aptopt='Acquire::Retries "3"'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--include="$pkgs")
# A root that boots: its name and a root password.
[ "$set" != dkms ] || mmdebstrap_opts+=(
	--customize-hook='echo mmtune-test >"$1/etc/hostname"'
	--customize-hook='echo "root:root" | chroot "$1" chpasswd')
mmdebstrap_opts+=(--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb')
key=$(printf '%s\n' "$suite" "$mirror" "$security" "${mmdebstrap_opts[@]}" | sha256sum | cut -c1-16)
dir=$cache/rootfs/$name-$key
mkdir -p "$cache/rootfs"
exec 8>"$cache/rootfs/.lock"
flock 8

if [ ! -f "$dir/.complete" ]; then
	log "mmdebstrap $suite into $dir (log: $dir.tmp/mmdebstrap.log)"
	start=$(date +%s)
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	if ! mmdebstrap "${mmdebstrap_opts[@]}" \
		"$suite" "$dir.tmp/root" \
		"deb $mirror $suite main" \
		"deb $mirror $suite-updates main" \
		"deb $security $suite-security main" >"$dir.tmp/mmdebstrap.log" 2>&1; then
		tail -n 30 "$dir.tmp/mmdebstrap.log" >&2
		die "mmdebstrap failed; log: $dir.tmp/mmdebstrap.log"
	fi
	echo "seconds: $(( $(date +%s) - start ))" >"$dir.tmp/build-time.txt"
	mv "$dir.tmp" "$dir"
	touch "$dir/.complete"
	log "made in $(( $(date +%s) - start ))s"
fi
touch "$dir/.used"
ls -1t "$cache"/rootfs/"$name"-????????????????/.used 2>/dev/null | tail -n +$((keep + 1)) |
	while read -r old; do log "pruning $(dirname "$old")"; rm -rf "$(dirname "$old")"; done
echo "$dir/root"

#!/bin/bash
# Make (once) a Debian root file system with systemd, DKMS and Debian's
# stock kernel headers, cached outside the repo; print its path.
#
#   tests/packaging/rootfs.sh [SUITE]  build if needed, print the directory
#
# SUITE: bookworm (Debian 12, the default: dkms 3.0.10, headers 6.1) or
# trixie (Debian 13: dkms 3.2.2, headers 6.12); the same package set.
# Cache: $MMTUNE_CACHE/rootfs/SUITE-<key>/root, key = the suite, the
# mirrors, the package list and the mmdebstrap options; the two most
# recently used roots of each suite are kept. Callers copy it; nobody
# changes the cached tree.
set -euo pipefail

suite=${1:-bookworm}
case $suite in
bookworm|trixie) ;;
*) echo "usage: $0 [bookworm|trixie]" >&2; exit 2 ;;
esac
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
mirror=${MMTUNE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${MMTUNE_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
keep=${MMTUNE_KEEP_ROOTFS:-2}

# systemd as init, what DKMS needs to build (and sign: openssl), python3 for
# mmtunectl, and linux-headers-amd64: Debian's stock headers, against which
# mmtune-dkms must decline.
pkgs=systemd,systemd-sysv,udev,kmod,dkms,make,gcc,libc6-dev,openssl,python3,linux-headers-amd64,e2fsprogs,procps

log() { echo "rootfs: $*" >&2; }
die() { log "error: $*"; exit 1; }
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (scripts/setup-host.sh)"

# The key covers what goes into the root, not this script's comments.
mmdebstrap_opts=(--variant=minbase --mode=root
	--aptopt='APT::Install-Recommends "false"'
	--aptopt='Acquire::Retries "3"'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--include="$pkgs"
	--customize-hook='echo mmtune-test >"$1/etc/hostname"'
	--customize-hook='echo "root:root" | chroot "$1" chpasswd'
	--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb')
key=$(printf '%s\n' "$suite" "$mirror" "$security" "${mmdebstrap_opts[@]}" | sha256sum | cut -c1-16)
dir=$cache/rootfs/$suite-$key
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
ls -1t "$cache"/rootfs/"$suite"-*/.used 2>/dev/null | tail -n +$((keep + 1)) |
	while read -r old; do log "pruning $(dirname "$old")"; rm -rf "$(dirname "$old")"; done
echo "$dir/root"

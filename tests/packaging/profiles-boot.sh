#!/bin/bash
# Every shipped profile on Debian's own kernels, booted under qemu (TCG,
# one thread) with the mmtune package installed and mmtune.service enabled
# with the override /etc/mmtune/profile (balanced), as the admin docs say:
#
#   bookworm-cloud  Debian 12 root, Debian 12's linux-image-cloud-amd64
#   trixie-cloud    Debian 13 root, Debian 13's linux-image-cloud-amd64
#   trixie-bpo      Debian 13 root, linux-image-amd64 from trixie-backports
#                   (the newest kernel Debian carries: zswap without its
#                   zpool parameter, which 6.18 removed)
#
# In each guest (tests/packaging/guest/profiles-check.sh): mmtune.service
# did not fail at boot and put balanced in force; then every profile of
# systemd/profiles/ is checked, applied (exit 0, no failure line, what the
# kernel lacks skipped with its one line: mmtune.ko, zswap or its zpool,
# the other kernel line's knobs), its kernel values read back, verified
# (5: kernel without mmtune hooks) and rolled back to the boot values.
#
#   tests/packaging/profiles-boot.sh [CASE...]   (default: all three)
#
# Needs build/packaging/out/deb (packaging/build.sh deb). Roots:
# tests/packaging/rootfs.sh SUITE cloud (cached); kernels from the Debian
# mirror, their .debs kept in $MMTUNE_CACHE/apt-archives-kernels. Guest
# time limits: lib.sh (load_scale); logs
# build/packaging/logs/profiles-boot-CASE-*. Prints TAP; exit 0 when every
# check passed.
set -uo pipefail
# shellcheck source=tests/packaging/lib.sh
. "$(dirname "$0")/lib.sh"
mirror=${MMTUNE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
archives=$cache/apt-archives-kernels
deb=build/packaging/out/deb/mmtune_$(packaging/version.sh)_all.deb
logs=build/packaging/logs
w=build/packaging/work/profiles-boot
[ -f "$deb" ] || { echo "no $deb: packaging/build.sh deb first" >&2; exit 2; }
cases=("$@")
[ $# -gt 0 ] || cases=(bookworm-cloud trixie-cloud trixie-bpo)
for c in "${cases[@]}"; do
	case $c in bookworm-cloud|trixie-cloud|trixie-bpo) ;;
	*) echo "usage: $0 [bookworm-cloud|trixie-cloud|trixie-bpo]..." >&2; exit 2 ;;
	esac
done
mkdir -p "$logs" "$archives"
start=$SECONDS
limit=$(( ${MMTUNE_E2E_TIMEOUT:-1200} * $(load_scale) ))

# image CASE: the case's root with its kernel and mmtune installed and the
# service enabled, as $w/CASE/root.img, vmlinuz and initrd.img.
image() {
	local suite=${1%%-*} kpkg=linux-image-cloud-amd64 r=$w/$1/root base out rc=0 k
	base=$(tests/packaging/rootfs.sh "$suite" cloud) || return 1
	copy_root "$base" "$r"
	if [ "$1" = trixie-bpo ]; then
		echo "deb $mirror trixie-backports main" >"$r/etc/apt/sources.list.d/backports.list"
		kpkg="-t trixie-backports linux-image-amd64"
	fi
	cp "$deb" "$r/var/tmp/"
	cp "$archives"/*.deb "$r/var/cache/apt/archives/" 2>/dev/null
	out=$(in_root "$r" sh -c "apt-get update && apt-get install -y $kpkg /var/tmp/${deb##*/} &&
		echo balanced >/etc/mmtune/profile && systemctl enable mmtune.service" 2>&1) || rc=$?
	cp -n "$r"/var/cache/apt/archives/*.deb "$archives/" 2>/dev/null
	rm -f "$r"/var/cache/apt/archives/*.deb
	printf '%s\n' "$out" >"$logs/profiles-boot-$1-apt.log"
	for k in "$r"/boot/vmlinuz-*; do k=${k##*/}; break; done
	if [ $rc != 0 ] || [ -z "$k" ] || [ ! -s "$r/boot/initrd.img-${k#vmlinuz-}" ]; then
		echo "apt-get install $kpkg mmtune failed (exit $rc): $logs/profiles-boot-$1-apt.log" >&2
		return 1
	fi
	# shellcheck disable=SC2016 # dpkg-query's format
	note "$1: $(in_root "$r" dpkg-query -W -f '${Package} ${Version}' "linux-image-${k#vmlinuz-}") on Debian $(cat "$r/etc/debian_version")"
	install_e2e_guest "$r" profiles-check.sh "$suite" "$(packaging/version.sh)"
	cp "$r/boot/$k" "$w/$1/vmlinuz"; cp "$r/boot/initrd.img-${k#vmlinuz-}" "$w/$1/initrd.img"
	mkfs.ext4 -q -F -L root -d "$r" "$w/$1/root.img" "$(( $(du -sm "$r" | cut -f1) + 512 ))M" >&2 || return 1
	rm -rf "$r"
}

tap_header
rc=0
for c in "${cases[@]}"; do
	t0=$SECONDS
	rm -rf "${w:?}/$c"; mkdir -p "$w/$c"
	if ! image "$c"; then
		not_ok "$c: the image (root, kernel, mmtune installed, mmtune.service enabled)"; rc=1; continue
	fi
	t1=$SECONDS
	guest_boot "$logs/profiles-boot-$c" "$limit" "$w/$c" "$w/$c/root.img" "$w/$c/results.tap"
	note "$c: image $((t1 - t0))s, boot and checks $((SECONDS - t1))s"
	# The guest's results, renumbered into this stream.
	while IFS= read -r l; do
		case $l in
		'ok '*) l=${l#ok }; ok "$c: ${l#* }" ;;
		'not ok '*) l=${l#not ok }; not_ok "$c: ${l#* }" ;;
		*) printf '%s\n' "$l" ;;
		esac
	done < <(sed 's/\r$//' "$w/$c/results.tap" 2>/dev/null)
	grep -q '^not ok' "$w/$c/results.tap" && rc=1
	grep -q '^# e2e: done' "$w/$c/results.tap" ||
		{ not_ok "$c: the guest finished its checks (console: $logs/profiles-boot-$c-console.log)"; rc=1; }
	rm -rf "${w:?}/$c"
done
note "profiles-boot: $((SECONDS - start))s"
tap_plan "$tap_n"
exit $rc

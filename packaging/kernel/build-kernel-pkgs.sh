#!/bin/bash
# Build the patched 6.1 kernel as packages with the kernel's own targets,
# cached outside the repo.
#
#   packaging/kernel/build-kernel-pkgs.sh [--deb] [--rpm]   (default: both)
#
#   bindeb-pkg: linux-image-<rel>, linux-headers-<rel> (+ linux-libc-dev)
#   rpm-pkg:    kernel, kernel-headers and kernel-devel (binrpm-pkg would be
#               cheaper but has no kernel-devel in 6.1, and DKMS needs it)
#
# <rel> is 6.1.<sublevel>-mmtune: LOCALVERSION=-mmtune on the make command
# line and CONFIG_LOCALVERSION emptied by packaging.config.
#
# Inputs: Debian's linux-source-6.1 (the pristine tree that
# scripts/kernel-lib.sh keeps under $MMTUNE_CACHE/pristine), the patch
# series kernel-patches/6.1/series, the configs x86_64_defconfig +
# kvm_guest.config + kernel-patches/configs/test-vm.config +
# packaging/kernel/packaging.config. The key hashes all of them, this
# script and scripts/kernel-lib.sh; ccache ($MMTUNE_CACHE/ccache) is shared
# with the test kernel, so a new key costs minutes, not a cold build. Same
# lock as kernel-build.sh: one kernel build at a time on the machine.
#
# Output ($MMTUNE_CACHE/kernel-pkgs/6.1-<key>/, linked from
# build/packaging/kernel-pkgs):
#   deb/*.deb  rpm/*.rpm  vmlinuz  kernel.release  build-info.txt  *.log
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
series_dir=$repo/kernel-patches/6.1
fragments=("$repo/kernel-patches/configs/test-vm.config" "$repo/packaging/kernel/packaging.config")
keep=${MMTUNE_KEEP_KERNEL_PKGS:-2}
localversion=-mmtune

want_deb=0 want_rpm=0
for a in "$@"; do
	case "$a" in
	--deb) want_deb=1 ;;
	--rpm) want_rpm=1 ;;
	*) echo "usage: $0 [--deb] [--rpm]" >&2; exit 2 ;;
	esac
done
[ $want_deb -eq 0 ] && [ $want_rpm -eq 0 ] && want_deb=1 want_rpm=1

log() { echo "kernel-pkgs: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Same source, lock and tree preparation as the test kernel.
. "$repo/scripts/kernel-lib.sh"
command -v rpmbuild >/dev/null || die "rpmbuild missing (apt-get install rpm)"
kernel_source
mkdir -p "$cache/kernel-pkgs"
kernel_lock

key=$(kernel_inputs_key "$localversion" "$0" "${fragments[@]}")
series_info=$(kernel_series_info)
out=$cache/kernel-pkgs/6.1-$key
tree=$out/linux
mkdir -p "$out"

prepare_tree() { kernel_prepare_tree "$tree" "$out" "${fragments[@]}"; }

export CCACHE_DIR=$cache/ccache CCACHE_MAXSIZE=5G
# ccache hashes the locale; rpmbuild sets LANG=C for %build. The same
# locale for both builds lets rpm-pkg's compiles hit bindeb-pkg's.
export LANG=C
unset LC_ALL LC_CTYPE LC_MESSAGES
export KBUILD_BUILD_TIMESTAMP="mmtune packaged kernel" KBUILD_BUILD_USER=mmtune KBUILD_BUILD_HOST=packaging
export DEBEMAIL="mmtune packaging <mmtune@localhost>" KDEB_CHANGELOG_DIST=bookworm
jobs=$(nproc)

if [ $want_deb -eq 1 ] && [ ! -f "$out/.deb-complete" ]; then
	log "bindeb-pkg: $src_pkg $pkgver, key $key (log: $out/deb.log)"
	start=$(date +%s)
	prepare_tree
	rel=$(make -s -C "$tree" LOCALVERSION=$localversion kernelrelease)
	case "$rel" in 6.1.*$localversion) ;; *) die "unexpected kernel release '$rel'" ;; esac
	export CCACHE_BASEDIR=$tree
	if ! make -C "$tree" -j"$jobs" CC="ccache gcc" LOCALVERSION=$localversion \
		KDEB_PKGVERSION="$rel-1" bindeb-pkg >"$out/deb.log" 2>&1; then
		tail -n 40 "$out/deb.log" >&2
		die "bindeb-pkg failed; full log: $out/deb.log"
	fi
	rm -rf "$out/deb"
	mkdir -p "$out/deb"
	mv "$out"/*.deb "$out/deb/"
	rm -f "$out"/*.buildinfo "$out"/*.changes
	cp "$tree/arch/x86/boot/bzImage" "$out/vmlinuz"
	echo "$rel" >"$out/kernel.release"
	echo "deb_seconds: $(( $(date +%s) - start ))" >"$out/deb-time.txt"
	rm -rf "$tree"
	touch "$out/.deb-complete"
	log "bindeb-pkg done in $(( $(date +%s) - start ))s"
fi

if [ $want_rpm -eq 1 ] && [ ! -f "$out/.rpm-complete" ]; then
	log "rpm-pkg: $src_pkg $pkgver, key $key (log: $out/rpm.log)"
	start=$(date +%s)
	prepare_tree
	# rpmbuild runs its own make from the tarball, out of reach of a
	# command-line LOCALVERSION: a localversion file (in rpm-pkg's tarball
	# list) gives the same release.
	echo "$localversion" >"$tree/localversion-mmtune"
	rel=$(make -s -C "$tree" kernelrelease)
	top=$out/rpmbuild
	rm -rf "$top"
	# rpm-pkg rebuilds the kernel from a source tarball inside rpmbuild with
	# plain "gcc": ccache's masquerade directory keeps that warm. The
	# BuildRequires name Fedora packages that Debian's rpm database cannot
	# know, hence --nodeps. gzip payload: xz of kernel-devel costs minutes.
	export CCACHE_BASEDIR=$top/BUILD
	if ! PATH=/usr/lib/ccache:$PATH make -C "$tree" -j"$jobs" \
		RPMOPTS="--define '_topdir $top' --nodeps --define '_binary_payload w6.gzdio'" \
		rpm-pkg >"$out/rpm.log" 2>&1; then
		tail -n 40 "$out/rpm.log" >&2
		die "rpm-pkg failed; full log: $out/rpm.log"
	fi
	rm -rf "$out/rpm"
	mkdir -p "$out/rpm"
	mv "$top"/RPMS/*/*.rpm "$out/rpm/"
	[ -f "$out/kernel.release" ] || echo "$rel" >"$out/kernel.release"
	echo "rpm_seconds: $(( $(date +%s) - start ))" >"$out/rpm-time.txt"
	rm -rf "$top" "$tree"
	touch "$out/.rpm-complete"
	log "rpm-pkg done in $(( $(date +%s) - start ))s"
fi

{
	echo "source_package: $src_pkg"
	echo "source_version: $pkgver"
	echo "kernelrelease: $(cat "$out/kernel.release")"
	echo "key: $key"
	for f in "${fragments[@]}"; do echo "config_fragment: ${f#$repo/} $(sha256sum "$f" | cut -d' ' -f1)"; done
	echo "$series_info"
	cat "$out"/deb-time.txt "$out"/rpm-time.txt 2>/dev/null || true
	(cd "$out" && ls deb/*.deb rpm/*.rpm 2>/dev/null | sed 's/^/package: /')
} >"$out/build-info.txt"
sed 's/^/kernel-pkgs: /' "$out/build-info.txt" >&2
touch "$out/.used"		# mtime = last use, for pruning

mkdir -p "$repo/build/packaging"
ln -sfn "$out" "$repo/build/packaging/kernel-pkgs"

# Keep the most recently used package sets only; drop unfinished ones.
ls -1t "$cache"/kernel-pkgs/6.1-*/.used 2>/dev/null | tail -n +$((keep + 1)) |
	while read -r old; do
		log "pruning $(dirname "$old")"
		rm -rf "$(dirname "$old")"
	done
for d in "$cache"/kernel-pkgs/6.1-*/; do
	[ -f "$d/.used" ] || [ "${d%/}" = "$out" ] || rm -rf "$d"
done
exit 0

#!/bin/bash
# Build the patched 6.1 kernel as packages with the kernel's own targets,
# cached outside the repo.
#
#   packaging/kernel/build-kernel-pkgs.sh [--deb] [--rpm]   (default: both)
#          [--distro debian-cloud|debian-generic|CONFIG] [--dry-run]
#
# --distro: the distribution's config instead of the test one, adapted by
# distro-config.sh (debian-cloud: linux-config-6.1's
# config.amd64_none_cloud-amd64, release 6.1.<n>-mmtune-cloud-amd64;
# debian-generic: config.amd64_none_amd64, 6.1.<n>-mmtune-amd64; a file:
# e.g. an AL2023/Fedora /boot/config-*, 6.1.<n>-mmtune). --dry-run: patch,
# configure (make olddefconfig), print the release and the options mmtune
# needs, and stop; no compile, no lock held for long.
# After bindeb-pkg / rpm-pkg, mmtune-modules-<rel> is built against the
# same tree and signed with its key (build-module-pkgs.sh).
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

want_deb=0 want_rpm=0 distro='' distro_cfg='' dry=0
while [ $# -gt 0 ]; do
	case "$1" in
	--deb) want_deb=1 ;;
	--rpm) want_rpm=1 ;;
	--distro) distro=${2:?--distro needs a name or a config file}; shift ;;
	--dry-run) dry=1 ;;
	*) echo "usage: $0 [--deb] [--rpm] [--distro debian-cloud|debian-generic|CONFIG] [--dry-run]" >&2; exit 2 ;;
	esac
	shift
done
case "$distro" in
'') ;;
debian-cloud) distro_cfg=/usr/src/linux-config-6.1/config.amd64_none_cloud-amd64.xz localversion=-mmtune-cloud-amd64 ;;
debian-generic) distro_cfg=/usr/src/linux-config-6.1/config.amd64_none_amd64.xz localversion=-mmtune-amd64 ;;
*) distro_cfg=$(realpath "$distro") ;;
esac
if [ -n "$distro_cfg" ]; then
	[ -r "$distro_cfg" ] || { echo "kernel-pkgs: error: $distro_cfg not readable (apt-get install linux-config-6.1?)" >&2; exit 1; }
	# The key covers the distribution config and distro-config.sh instead
	# of the test fragments.
	fragments=("$distro_cfg" "$repo/packaging/kernel/distro-config.sh")
fi
[ $want_deb -eq 0 ] && [ $want_rpm -eq 0 ] && want_deb=1 want_rpm=1

log() { echo "kernel-pkgs: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Same source, lock and tree preparation as the test kernel.
. "$repo/scripts/kernel-lib.sh"
command -v rpmbuild >/dev/null || die "rpmbuild missing (apt-get install rpm)"
kernel_source
mkdir -p "$cache/kernel-pkgs"
# A dry run compiles nothing: it does not wait for the build lock.
[ $dry -eq 1 ] || kernel_lock

key=$(kernel_inputs_key "$localversion" "$0" "${fragments[@]}")
series_info=$(kernel_series_info)
out=$cache/kernel-pkgs/6.1-$key
[ $dry -eq 1 ] && out=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-distro-dry.XXXXXX")
tree=$out/linux
mkdir -p "$out"

# The distribution's config: the pristine tree, the series, the config
# file, distro-config.sh (which runs olddefconfig and checks the options).
prepare_distro_tree() {
	rm -rf "$tree"
	cp -a "$pristine" "$tree"
	rm -f "$tree/.complete"
	(cd "$tree" && QUILT_PATCHES="$series_dir" QUILT_PC=.pc quilt --quiltrc=- push -a --fuzz=0) \
		>"$out/patch.log" 2>&1 || { tail -n 20 "$out/patch.log" >&2; die "the series does not apply"; }
	rm -rf "$tree/.pc"
	case "$distro_cfg" in
	*.xz) xzcat "$distro_cfg" >"$tree/.config" ;;
	*) cp "$distro_cfg" "$tree/.config" ;;
	esac
	(cd "$tree" && LOCALVERSION=$localversion "$repo/packaging/kernel/distro-config.sh" .config) \
		>"$out/config.log" 2>&1 || { cat "$out/config.log" >&2; die "distro-config.sh failed"; }
	sed 's/^/kernel-pkgs: /' "$out/config.log" >&2
}
# keep_signing_key TREE DIR: the module signing key TREE's kernel trusts
# (its .builtin_trusted_keys holds certs/signing_key.x509), kept in DIR
# beside the packages, out of git and out of the packages, so that
# mmtune-modules-<rel> can be rebuilt for a new mmtune without rebuilding the
# kernel (build-module-pkgs.sh --key --cert against the headers or
# kernel-devel). Private: mode 0600. Nothing for a kernel without signing.
keep_signing_key() {
	local sigkey
	sigkey=$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$/\1/p' "$1/.config")
	[ -n "$sigkey" ] && [ -f "$1/certs/signing_key.x509" ] || return 0
	case "$sigkey" in /*|pkcs11:*) ;; *) sigkey=$1/$sigkey ;; esac
	mkdir -p "$2"
	chmod 0700 "$2"
	case "$sigkey" in pkcs11:*) echo "$sigkey" >"$2/key-uri" ;;
	*) install -m 0600 "$sigkey" "$2/signing_key.pem" ;; esac
	install -m 0644 "$1/certs/signing_key.x509" "$2/signing_key.x509"
}
prepare_tree() {
	if [ -n "$distro_cfg" ]; then prepare_distro_tree
	else kernel_prepare_tree "$tree" "$out" "${fragments[@]}"; fi
}

if [ $dry -eq 1 ]; then
	prepare_tree
	log "dry run: release $(make -s -C "$tree" LOCALVERSION=$localversion kernelrelease)"
	grep -E '^(# )?CONFIG_(MMTUNE_HOOKS|ZSWAP|ZSWAP_DEFAULT_ON|ZSWAP_ZPOOL_DEFAULT|ZSWAP_COMPRESSOR_DEFAULT|ZSMALLOC|ZBUD|Z3FOLD|MODULE_SIG|MODULE_SIG_KEY|MODULE_SIG_ALL|SYSTEM_TRUSTED_KEYS|DEBUG_INFO|DEBUG_INFO_BTF|PROVE_LOCKING|DEBUG_VM|LOCKDEP|ENA_ETHERNET|BLK_DEV_NVME|XFS_FS|BLK_DEV_DM|LOCALVERSION)[= ]' \
		"$tree/.config" | sed 's/^/kernel-pkgs: /' >&2
	rm -rf "$out"
	exit 0
fi

export CCACHE_DIR=$cache/ccache CCACHE_MAXSIZE=5G
if [ -n "$distro_cfg" ]; then
	# A distribution config compiles with -g (DEBUG_INFO, BTF): ccache
	# would then hash the working directory, and every new key (a new
	# tree path) would miss. Without it a one-line patch change is a warm
	# rebuild. Its objects with debug info need more room than the test
	# kernel's.
	export CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=12G
	# dpkg-deb's default xz takes minutes on linux-image-*-dbg.
	export KDEB_COMPRESS=${KDEB_COMPRESS:-gzip}
fi
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
	# The load while building, one line a minute: the machine is shared,
	# and the time only means something next to it.
	# (9>&-: a sampler that outlives a killed build must not hold the lock.)
	(while sleep 60; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done) >"$out/load.log" 9>&- &
	sampler=$!
	trap 'kill $sampler 2>/dev/null || true' EXIT
	ccache -s >"$out/ccache-before.txt" 2>&1 || true
	if ! make -C "$tree" -j"$jobs" CC="ccache gcc" LOCALVERSION=$localversion \
		KDEB_PKGVERSION="$rel-1" bindeb-pkg >"$out/deb.log" 2>&1; then
		tail -n 40 "$out/deb.log" >&2
		die "bindeb-pkg failed; full log: $out/deb.log"
	fi
	kill $sampler
	ccache -s >"$out/ccache-after.txt" 2>&1 || true
	keep_signing_key "$tree" "$out/signing"
	rm -rf "$out/deb"
	mkdir -p "$out/deb"
	mv "$out"/*.deb "$out/deb/"
	rm -f "$out"/*.buildinfo "$out"/*.changes
	cp "$tree/arch/x86/boot/bzImage" "$out/vmlinuz"
	echo "$rel" >"$out/kernel.release"
	# mmtune-modules-<rel>, signed with this build's certs/signing_key.pem.
	"$repo/packaging/kernel/build-module-pkgs.sh" "$tree" --deb --out "$out/deb" ||
		die "mmtune-modules-$rel (.deb) failed"
	{
		echo "deb_seconds: $(( $(date +%s) - start ))"
		echo "deb_load_at_end: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$out/deb-time.txt"
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
	# --noclean keeps BUILD/ (rpm 4.18 removes it after a build): its
	# kernel tree signs mmtune-modules below. 6.1's spec makes no
	# debuginfo package and installs modules with their debug info (382 MB
	# for a distribution config): INSTALL_MOD_STRIP strips them before
	# modules_install signs them, as bindeb-pkg's image package is.
	export CCACHE_BASEDIR=$top/BUILD
	if ! PATH=/usr/lib/ccache:$PATH INSTALL_MOD_STRIP=1 make -C "$tree" -j"$jobs" \
		RPMOPTS="--define '_topdir $top' --nodeps --noclean --define '_binary_payload w6.gzdio'" \
		rpm-pkg >"$out/rpm.log" 2>&1; then
		tail -n 40 "$out/rpm.log" >&2
		die "rpm-pkg failed; full log: $out/rpm.log"
	fi
	rm -rf "$out/rpm"
	mkdir -p "$out/rpm"
	mv "$top"/RPMS/*/*.rpm "$out/rpm/"
	# rpm-pkg built its own kernel inside rpmbuild, with its own signing
	# key: sign mmtune-modules-<rel> with that one.
	rtree=$(dirname "$(ls "$top"/BUILD/*/Module.symvers 2>/dev/null | head -n 1)")
	[ "$rtree" != . ] || die "no rpm-pkg build tree under $top/BUILD"
	"$repo/packaging/kernel/build-module-pkgs.sh" "$rtree" --rpm --out "$out/rpm" ||
		die "mmtune-modules-$rel (.rpm) failed"
	# rpmbuild compiled its own tree, so its kernel trusts its own key.
	keep_signing_key "$rtree" "$out/signing-rpm"
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
	# (--deb or --rpm alone: the other directory is missing, which is fine.)
	(cd "$out" && { ls deb/*.deb rpm/*.rpm 2>/dev/null || true; } | sed 's/^/package: /')
} >"$out/build-info.txt"
sed 's/^/kernel-pkgs: /' "$out/build-info.txt" >&2
touch "$out/.used"		# mtime = last use, for pruning
echo "${distro:-test}" >"$out/flavour"

mkdir -p "$repo/build/packaging"
ln -sfn "$out" "$repo/build/packaging/kernel-pkgs"

# Keep the most recently used package sets of this flavour (test kernel,
# debian-cloud, ...) only: a test-kernel rebuild never prunes an hour-long
# distribution build. Drop unfinished sets (failed or interrupted builds:
# a rerun starts from a fresh tree anyway, ccache is what it resumes from).
ls -1t "$cache"/kernel-pkgs/6.1-*/.used 2>/dev/null | while read -r used; do
	d=$(dirname "$used")
	if [ "$(cat "$d/flavour" 2>/dev/null || echo test)" = "${distro:-test}" ]; then echo "$d"; fi
done | tail -n +$((keep + 1)) |
	while read -r old; do
		log "pruning $old"
		rm -rf "$old"
	done
for d in "$cache"/kernel-pkgs/6.1-*/; do
	[ -f "$d/.used" ] || [ "${d%/}" = "$out" ] || rm -rf "$d"
done
exit 0

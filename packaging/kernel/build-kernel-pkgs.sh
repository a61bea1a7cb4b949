#!/bin/bash
# Build the patched kernel of one line (6.1 or 6.12) as packages with the
# kernel's own targets, cached outside the repo.
#
#   packaging/kernel/build-kernel-pkgs.sh [--line 6.1|6.12] [--deb] [--rpm]
#          [--distro debian-cloud|debian-generic|CONFIG] [--variant NAME]
#          [--dry-run]                                 (default: 6.1, both)
#
# --line LINE: kernel-patches/LINE/series on Debian's linux-source-LINE,
# configs from linux-config-LINE. One recipe for every line; what differs
# is kbuild's (below, "Lines").
# --distro: the distribution's config instead of the test one, adapted by
# distro-config.sh (debian-cloud: linux-config-LINE's
# config.amd64_none_cloud-amd64, release LINE.<n>-mmtune<id>-cloud-amd64;
# debian-generic: config.amd64_none_amd64, LINE.<n>-mmtune<id>-amd64; a
# file: e.g. an AL2023/Fedora /boot/config-*, LINE.<n>-mmtune<id>). --dry-run: patch,
# configure (make olddefconfig), print the release and the options mmtune
# needs, and stop; no compile, no lock held for long.
# --variant NAME: the same inputs built again as a set of its own (a new
# build id, a new signing key; ccache makes it minutes): what a rebuild
# for a new key looks like to hosts (tests/packaging/full.sh upgrades
# from one to the other).
#
# Every set has a build id (UTC date and time of its first build,
# yyyymmddHHMMSS, or MMTUNE_KERNEL_BUILD_ID): in the release, the Debian
# revision and the RPM release, so a rebuilt kernel is a new release whose
# packages the meta package moves to.
#
# The module signing key is never inside the kernel tree: it is made per
# set in $out/signing/ (0600; or MMTUNE_MODULE_SIG_KEY, a fleet key file
# or pkcs11: URI, is used), and CONFIG_MODULE_SIG_KEY names it by an
# absolute path, so neither bindeb-pkg's headers nor rpm-pkg's
# kernel-devel (a copy of the whole build tree) can pick it up. One key
# per set: the .deb and .rpm kernels of a set trust the same key.
#
#   bindeb-pkg: linux-image-<rel>, linux-headers-<rel>; linux-libc-dev goes
#               to unpublished/ (it would shadow Debian's)
#   rpm:        <rpm name>, <rpm name>-devel, kbuild's spec renamed by
#               mkspec-mmtune, so nothing replaces the distribution's
#               kernel, kernel-devel or kernel-headers; <rpm name>-headers
#               goes to unpublished/. <rpm name>: kernel-mmtune (6.1),
#               kernel-mmtune6.12 (6.12, as Amazon Linux names its
#               kernel6.12), then the flavour: kernel-mmtune-cloud-amd64,
#               kernel-mmtune6.12-cloud-amd64 (one name per line and
#               flavour: the RPMs are not install-only).
# Then, from the packaged headers / kernel-devel and the set's key
# (build-module-pkgs.sh --build), mmtune-modules-<rel> pinned to this
# build's kernel and the meta package that depends on exactly both,
# mmtune-kernel-<flavour> (6.1: test, cloud-amd64, amd64, custom) and
# mmtune-kernel-<line>-<flavour> on the other lines (a host moves to
# another line by installing that line's meta package, never by an
# upgrade); these are rebuilt, without a kernel build, whenever module/ or
# their packaging changes.
#
# <rel> is LINE.<sublevel>-mmtune<build id>[-<flavour>]: LOCALVERSION on
# the make command line and CONFIG_LOCALVERSION emptied by packaging.config
# or distro-config.sh. Every build is a release of its own, so a rebuild
# (a new signing key) installs beside the running kernel instead of
# replacing its /lib/modules/<rel> (PACKAGING.md, "Releases").
#
# Lines: 6.1 runs the kbuild commands it ran before it had a line:
# bindeb-pkg with CC="ccache gcc", then "make rpm-pkg MKSPEC=mkspec-mmtune"
# in a second tree (6.1's binrpm-pkg has no devel package, which DKMS
# needs; rpm-pkg compiles again inside rpmbuild, ccache keeps that short).
# 6.12 compiles once: bindeb-pkg and then binrpm-pkg in the same tree
# (6.12's binrpm-pkg builds in place and makes the devel package from
# install-extmod-build), gcc through ccache's masquerade directory (with
# CC="ccache gcc" kbuild would drop the devel package, CC != HOSTCC), the
# spec renamed through kbuild's cmd_mkspec (6.12 has no MKSPEC). Modules
# are installed as the config says (Debian's 6.12 configs: signed, then
# xz-compressed; mmtune-modules keeps an uncompressed extra/mmtune.ko).
# No line sees the build host's Rust toolchain (a failing rustc first in
# PATH): 6.12's Kconfig would record its version (CONFIG_RUSTC_VERSION)
# in every object's autoconf.h, as Debian's build does not.
#
# Inputs: Debian's linux-source-LINE (the pristine tree that
# scripts/kernel-lib.sh keeps under $MMTUNE_CACHE/pristine), the patch
# series kernel-patches/LINE/series, the configs x86_64_defconfig +
# kvm_guest.config + kernel-patches/configs/test-vm.config (+
# test-vm-LINE.config, if there is one) + packaging/kernel/packaging.config,
# or the distribution config and distro-config.sh. The key hashes all of
# them, this script and scripts/kernel-lib.sh; ccache ($MMTUNE_CACHE/ccache)
# is shared with the test kernel, so a new key costs minutes, not a cold
# build. Same lock as kernel-build.sh: one kernel build at a time on the
# machine.
#
# Output ($MMTUNE_CACHE/kernel-pkgs/LINE-<key>/, linked from
# build/packaging/kernel-pkgs-LINE[-<variant>]):
#   deb/*.deb  rpm/*.rpm  (what a repository publishes: packaging/repo/)
#   unpublished/  linux-libc-dev, <rpm name>-headers
#   signing/      signing_key.pem (0600), signing_key.x509
#   vmlinuz  kernel.release  build-id  build-info.txt  *.log
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
keep=${MMTUNE_KEEP_KERNEL_PKGS:-2}
localversion=-mmtune
usage="usage: $0 [--line 6.1|6.12] [--deb] [--rpm] [--distro debian-cloud|debian-generic|CONFIG] [--variant NAME] [--dry-run]"

kline=6.1 want_deb=0 want_rpm=0 distro='' distro_cfg='' dry=0 variant=''
while [ $# -gt 0 ]; do
	case "$1" in
	--line) kline=${2:?--line needs a kernel line (6.1, 6.12)}; shift ;;
	--deb) want_deb=1 ;;
	--rpm) want_rpm=1 ;;
	--variant) variant=${2:?--variant needs a name}; shift ;;
	--distro) distro=${2:?--distro needs a name or a config file}; shift ;;
	--dry-run) dry=1 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
	shift
done
log_name=kernel-pkgs
# Same row, source, lock and tree preparation as the test kernel.
. "$repo/scripts/kernel-lib.sh"
kernel_line "$kline"
fragments=("${line_fragments[@]}" "$repo/packaging/kernel/packaging.config")
case "$variant" in ''|[a-z0-9]*) ;; *) echo "--variant: lower-case letters, digits, '-'" >&2; exit 2 ;; esac
# flavour: the meta package's name, mmtune-kernel-<flavour>.
case "$distro" in
'') flavour='test' ;;
debian-cloud) distro_cfg=/usr/src/linux-config-$kline/config.amd64_none_cloud-amd64.xz localversion=-mmtune-cloud-amd64 flavour=cloud-amd64 ;;
debian-generic) distro_cfg=/usr/src/linux-config-$kline/config.amd64_none_amd64.xz localversion=-mmtune-amd64 flavour=amd64 ;;
*) distro_cfg=$(realpath "$distro") flavour=custom ;;
esac
# The RPM kernel's name: never "kernel" (the distribution's), and one per
# line (kernel-mmtune6.12...); the meta package's likewise.
meta=mmtune-kernel-$flavour rpm_name=kernel$localversion
if [ "$kline" != 6.1 ]; then
	meta=mmtune-kernel-$kline-$flavour rpm_name=kernel-mmtune$kline${localversion#-mmtune}
fi
if [ -n "$distro_cfg" ]; then
	[ -r "$distro_cfg" ] || { echo "kernel-pkgs: error: $distro_cfg not readable (apt-get install linux-config-$kline?)" >&2; exit 1; }
	# The key covers the distribution config and distro-config.sh instead
	# of the test fragments.
	fragments=("$distro_cfg" "$repo/packaging/kernel/distro-config.sh")
fi
[ $want_deb -eq 0 ] && [ $want_rpm -eq 0 ] && want_deb=1 want_rpm=1

command -v rpmbuild >/dev/null || die "rpmbuild missing (apt-get install rpm)"
kernel_source
mkdir -p "$cache/kernel-pkgs"

# A fleet key (file or pkcs11: URI) instead of a key per set: its
# certificate is part of the key, never the private key itself.
fleet_key=${MMTUNE_MODULE_SIG_KEY:-}
fleet_id=''
if [ -n "$fleet_key" ]; then
	case "$fleet_key" in
	pkcs11:*) fleet_id=$fleet_key ;;
	*) fleet_key=$(realpath "$fleet_key")
	   fleet_id=$(openssl x509 -in "$fleet_key" -outform DER 2>/dev/null | sha256sum | cut -c1-64) ||
		die "MMTUNE_MODULE_SIG_KEY=$fleet_key: no certificate in it (PEM key and certificate, as certs/signing_key.pem)" ;;
	esac
fi
key=$(kernel_inputs_key "$localversion${variant:+ variant=$variant}${fleet_id:+ fleet=$fleet_id}" "$0" \
	"$repo/packaging/kernel/mkspec-mmtune" "${fragments[@]}")
series_info=$(kernel_series_info)
out=$cache/kernel-pkgs/$kline-$key
if [ $dry -eq 1 ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-distro-dry.XXXXXX")
	# A dry run that dies (a series that does not apply) leaves no key.
	trap 'rm -rf "$out"' EXIT
fi
# The module packages' own inputs (see build_modules below).
modules_key=$( {
	"$repo/packaging/version.sh"
	cat "$repo/packaging/kernel/build-module-pkgs.sh"
	find "$repo/packaging/modules" -type f | LC_ALL=C sort | xargs cat
	(cd "$repo/module" && for f in Kbuild Makefile ./*.h ./*.c; do case "$f" in *.mod.c) ;; *) cat "$f" ;; esac; done)
} | sha256sum | cut -c1-16)
# The build lock only when something is to be built: a complete set is
# read without waiting behind another kernel build (check-packaging beside
# check-debug). A run that builds takes the lock, then rechecks (another
# run may have finished the same set meanwhile); only a run holding the
# lock stages a key or prunes. A dry run compiles nothing: no lock.
set_ready() {
	local k
	for k in deb rpm; do
		if [ -f "$out/.$k-complete" ]; then
			[ -f "$out/.modules-$k-$modules_key" ] || return 1
		else
			eval "[ \$want_$k -eq 0 ]" || return 1
		fi
	done
}
locked=0
if [ $dry -eq 0 ] && ! set_ready; then
	kernel_lock
	locked=1
elif [ $dry -eq 0 ]; then
	# Used now: a pruning run (under the lock) keeps the newest sets.
	touch "$out/.used"
fi
# No Rust toolchain of the build host in the kernel config (see the top):
# a rustc that fails, first in PATH.
norust=$cache/kernel-pkgs/.no-rust
if [ ! -x "$norust/rustc" ]; then
	mkdir -p "$norust"
	printf '#!/bin/sh\n# build-kernel-pkgs.sh: the packaged kernels are built without Rust\nexit 127\n' >"$norust/rustc.tmp"
	chmod +x "$norust/rustc.tmp"
	mv "$norust/rustc.tmp" "$norust/rustc"
fi
export PATH=$norust:$PATH
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
	# thp_swap needs these; distro-config.sh does not set them (Debian's
	# configs have both on every line): a --distro FILE config must too.
	local sym
	for sym in TRANSPARENT_HUGEPAGE THP_SWAP; do
		grep -qx "CONFIG_$sym=y" "$tree/.config" ||
			die "$distro_cfg: CONFIG_$sym is not y (mmtune's thp_swap and large-folio swap-out need it)"
	done
}
# The set's module signing key, outside every kernel tree. Made once per
# set (both halves, .deb and .rpm, trust it), as kbuild would make
# certs/signing_key.pem, into $out/signing/ (0700; the key 0600). While a
# kernel builds, a copy sits at one fixed path ($stage_key):
# CONFIG_MODULE_SIG_KEY is a string in autoconf.h, which every object
# includes, and a path that changed with each set would cost ccache's
# direct mode on every file. The copy is removed after the build (EXIT).
sigdir=$out/signing
stage_dir=$cache/kernel-pkgs/.signing-stage
# A dry run takes no lock: never the staged key of a build that runs.
[ $dry -eq 1 ] && stage_dir=$out/.signing-stage
stage_key=$stage_dir/signing_key.pem
make_signing_key() {
	local g
	mkdir -p "$sigdir"
	chmod 0700 "$sigdir"
	if [ -n "$fleet_key" ]; then
		echo "$fleet_key" >"$sigdir/key-uri"
		return 0
	fi
	[ -f "$sigdir/signing_key.pem" ] && return 0
	g=$(mktemp)
	sed "s/^CN = .*/CN = mmtune kernel $flavour build $build_id/; s/^#O = .*/O = mmtune/" \
		"$pristine/certs/default_x509.genkey" >"$g"
	(umask 077 && openssl req -new -nodes -utf8 -sha256 -days 36500 -batch -x509 -config "$g" \
		-outform PEM -out "$sigdir/signing_key.pem.tmp" -keyout "$sigdir/signing_key.pem.tmp") >/dev/null 2>&1 ||
		{ rm -f "$g"; die "openssl could not make the module signing key"; }
	rm -f "$g"
	mv "$sigdir/signing_key.pem.tmp" "$sigdir/signing_key.pem"
	openssl x509 -in "$sigdir/signing_key.pem" -outform DER -out "$sigdir/signing_key.x509"
	chmod 0644 "$sigdir/signing_key.x509"
}
# The key path the kernel config names.
config_key() {
	if [ -n "$fleet_key" ]; then echo "$fleet_key"; return; fi
	mkdir -p "$stage_dir"; chmod 0700 "$stage_dir"
	install -m 0600 "$sigdir/signing_key.pem" "$stage_key"
	echo "$stage_key"
}
prepare_tree() {
	if [ -n "$distro_cfg" ]; then prepare_distro_tree
	else kernel_prepare_tree "$tree" "$out" "${fragments[@]}"; fi
	# Signing on, with the key outside the tree (a config without
	# MODULE_SIG has nothing to sign: left as it is).
	if grep -qx 'CONFIG_MODULE_SIG=y' "$tree/.config"; then
		(cd "$tree" && scripts/config --file .config --set-str MODULE_SIG_KEY "$(config_key)" &&
			make -s olddefconfig) >>"$out/config.log" 2>&1 || die "setting CONFIG_MODULE_SIG_KEY failed"
		grep -qx "CONFIG_MODULE_SIG_KEY=\"$(config_key)\"" "$tree/.config" ||
			die "CONFIG_MODULE_SIG_KEY did not survive olddefconfig"
	fi
}
# no_key_in_tree TREE: kbuild makes certs/signing_key.pem only when
# CONFIG_MODULE_SIG_KEY is that default; fail loudly should it ever appear.
no_key_in_tree() {
	if [ -e "$1/certs/signing_key.pem" ]; then die "$1/certs/signing_key.pem exists: a private key inside the tree would be packaged"; fi
}
# keep_cert TREE: the certificate TREE's kernel trusts (.builtin_trusted_keys)
# beside the key; both halves of a set must have built in the same one.
keep_cert() {
	[ -f "$1/certs/signing_key.x509" ] || return 0
	if [ -f "$sigdir/signing_key.x509" ] && [ -z "$fleet_key" ]; then
		cmp -s "$1/certs/signing_key.x509" "$sigdir/signing_key.x509" ||
			die "$1 trusts another certificate than $sigdir/signing_key.x509"
	else
		install -m 0644 "$1/certs/signing_key.x509" "$sigdir/signing_key.x509"
	fi
}

if [ $dry -eq 1 ]; then
	build_id=dry
	make_signing_key
	prepare_tree
	rm -f "$stage_key"
	log "dry run: release $(make -s --no-print-directory -C "$tree" LOCALVERSION=$localversion kernelrelease) (a build puts its build id after -mmtune)"
	grep -E '^(# )?CONFIG_(MMTUNE_HOOKS|THP_SWAP|TRANSPARENT_HUGEPAGE|MODULE_COMPRESS_XZ|MODULE_COMPRESS_ALL|RUSTC_VERSION|ZSWAP|ZSWAP_DEFAULT_ON|ZSWAP_ZPOOL_DEFAULT|ZSWAP_COMPRESSOR_DEFAULT|ZSMALLOC|ZBUD|Z3FOLD|MODULE_SIG|MODULE_SIG_KEY|MODULE_SIG_ALL|SYSTEM_TRUSTED_KEYS|DEBUG_INFO|DEBUG_INFO_BTF|PROVE_LOCKING|DEBUG_VM|LOCKDEP|ENA_ETHERNET|BLK_DEV_NVME|XFS_FS|BLK_DEV_DM|LOCALVERSION)[= ]' \
		"$tree/.config" | sed 's/^/kernel-pkgs: /' >&2
	rm -rf "$out"
	exit 0
fi

# The set's build id: made once, shared by both halves.
[ -s "$out/build-id" ] || echo "${MMTUNE_KERNEL_BUILD_ID:-$(date -u +%Y%m%d%H%M%S)}" >"$out/build-id"
build_id=$(cat "$out/build-id")
case "$build_id" in *[!0-9]*|'') die "build id '$build_id': digits only (MMTUNE_KERNEL_BUILD_ID)" ;; esac
# The build id is part of the release (see <rel> above).
localversion=-mmtune$build_id${localversion#-mmtune}
make_signing_key
# (without the lock, the staged key is another run's: never removed)
[ $locked -eq 0 ] || trap 'rm -f "$stage_key"' EXIT

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
	rel=$(make -s --no-print-directory -C "$tree" LOCALVERSION=$localversion kernelrelease)
	case "$rel" in "$kline".*$localversion) ;; *) die "unexpected kernel release '$rel'" ;; esac
	export CCACHE_BASEDIR=$tree
	# The load while building, one line a minute: the machine is shared,
	# and the time only means something next to it.
	# (9>&-: a sampler that outlives a killed build must not hold the lock.)
	(while sleep 60; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done) >"$out/load.log" 9>&- &
	sampler=$!
	trap 'kill $sampler 2>/dev/null || true; rm -f "$stage_key"' EXIT
	ccache -s >"$out/ccache-before.txt" 2>&1 || true
	# The build id as the Debian revision, <rel>-<build id>, and in
	# "uname -v" (#<build id>, as rpm-pkg's %{release} puts it there).
	# 6.1: CC="ccache gcc", as always. The other lines: gcc through
	# ccache's masquerade directory, so that binrpm-pkg (CC must equal
	# HOSTCC for its devel package) can follow in this tree without a
	# recompile, and DEB_BUILD_OPTIONS=terse (6.12's debian/rules is
	# verbose otherwise: every command line in deb.log).
	if [ "$kline" = 6.1 ]; then deb_env=() deb_cc=(CC="ccache gcc")
	else deb_env=(PATH="/usr/lib/ccache:$PATH" DEB_BUILD_OPTIONS=terse) deb_cc=(); fi
	if ! env "${deb_env[@]}" make -C "$tree" -j"$jobs" "${deb_cc[@]}" LOCALVERSION=$localversion \
		KBUILD_BUILD_VERSION="$build_id" KDEB_PKGVERSION="$rel-$build_id" bindeb-pkg >"$out/deb.log" 2>&1; then
		tail -n 40 "$out/deb.log" >&2
		die "bindeb-pkg failed; full log: $out/deb.log"
	fi
	kill $sampler
	ccache -s >"$out/ccache-after.txt" 2>&1 || true
	no_key_in_tree "$tree"
	keep_cert "$tree"
	rm -rf "$out/deb"
	mkdir -p "$out/deb" "$out/unpublished"
	mv "$out"/*.deb "$out/deb/"
	# Userspace headers at a version above Debian's: never published.
	mv "$out"/deb/linux-libc-dev_*.deb "$out/unpublished/" 2>/dev/null || true
	rm -f "$out"/*.buildinfo "$out"/*.changes
	cp "$tree/arch/x86/boot/bzImage" "$out/vmlinuz"
	echo "$rel" >"$out/kernel.release"
	{
		echo "deb_seconds: $(( $(date +%s) - start ))"
		echo "deb_load_at_end: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$out/deb-time.txt"
	# 6.12's binrpm-pkg packages this tree as it is (below).
	if [ "$kline" != 6.1 ] && [ $want_rpm -eq 1 ] && [ ! -f "$out/.rpm-complete" ]; then
		touch "$out/.tree-built"
	else
		rm -rf "$tree"
	fi
	touch "$out/.deb-complete"
	log "bindeb-pkg done in $(( $(date +%s) - start ))s"
fi

# 6.12 (every line but 6.1): binrpm-pkg, in bindeb-pkg's tree when this
# run built it, else in a tree of its own compiled first (ccache).
# rpmbuild's %build and %install rerun make in the tree; with the same
# release and build version nothing is compiled again. kbuild's spec
# (scripts/package/kernel.spec through mkspec) renamed by mkspec-mmtune
# in place of kbuild's cmd_mkspec; its devel package is
# install-extmod-build's (Makefiles, include/, scripts/, Module.symvers,
# no certs/, no .config: include/config/auto.conf); INSTALL_MOD_STRIP as
# bindeb-pkg's image (kernel.spec installs the modules with their debug
# info otherwise and has no debuginfo package).
if [ $want_rpm -eq 1 ] && [ ! -f "$out/.rpm-complete" ] && [ "$kline" != 6.1 ]; then
	log "binrpm-pkg: $src_pkg $pkgver, key $key (log: $out/rpm.log)"
	start=$(date +%s)
	if [ -f "$out/.tree-built" ] && [ -d "$tree" ]; then
		log "binrpm-pkg in bindeb-pkg's tree"
		# The config names the staged key, which the run that built the
		# tree removed on exit: stage it again (6.12's certs/ needs it).
		if grep -qx 'CONFIG_MODULE_SIG=y' "$tree/.config"; then config_key >/dev/null; fi
	else
		rm -f "$out/.tree-built"
		prepare_tree
	fi
	rel=$(make -s --no-print-directory -C "$tree" LOCALVERSION=$localversion kernelrelease)
	case "$rel" in "$kline".*$localversion) ;; *) die "unexpected kernel release '$rel'" ;; esac
	export CCACHE_BASEDIR=$tree MMTUNE_RPM_NAME=$rpm_name MMTUNE_RPM_RELEASE=$build_id
	(while sleep 60; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done) >"$out/rpm-load.log" 9>&- &
	sampler=$!
	trap 'kill $sampler 2>/dev/null || true; rm -f "$stage_key"' EXIT
	# The compile first, with our make's jobs: rpmbuild's %build runs
	# make without -j (_smp_mflags is empty) and may not pass the jobserver on.
	if ! { PATH=/usr/lib/ccache:$PATH make -C "$tree" -j"$jobs" LOCALVERSION=$localversion \
			KBUILD_BUILD_VERSION="$build_id" all &&
		PATH=/usr/lib/ccache:$PATH INSTALL_MOD_STRIP=1 make -C "$tree" -j"$jobs" LOCALVERSION=$localversion \
			KBUILD_BUILD_VERSION="$build_id" "cmd_mkspec=$repo/packaging/kernel/mkspec-mmtune \$@" \
			RPMOPTS="--nodeps --noclean --define '_binary_payload w6.gzdio'" binrpm-pkg; } >"$out/rpm.log" 2>&1; then
		tail -n 40 "$out/rpm.log" >&2
		die "binrpm-pkg failed; full log: $out/rpm.log"
	fi
	kill $sampler
	no_key_in_tree "$tree"
	keep_cert "$tree"
	rm -rf "$out/rpm"
	mkdir -p "$out/rpm" "$out/unpublished"
	mv "$tree"/rpmbuild/RPMS/*/*.rpm "$out/rpm/"
	grep -q "^Name: $rpm_name\$" "$tree/rpmbuild/SPECS/kernel.spec" ||
		die "the spec was not renamed (mkspec-mmtune not run?): $(grep '^Name:' "$tree/rpmbuild/SPECS/kernel.spec")"
	mv "$out"/rpm/"$rpm_name"-headers-*.rpm "$out/unpublished/" 2>/dev/null || true
	[ -f "$out/kernel.release" ] || echo "$rel" >"$out/kernel.release"
	[ -f "$out/vmlinuz" ] || cp "$tree/arch/x86/boot/bzImage" "$out/vmlinuz"
	{
		echo "rpm_seconds: $(( $(date +%s) - start ))"
		echo "rpm_load_at_end: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$out/rpm-time.txt"
	rm -rf "$tree" "$out/.tree-built"
	touch "$out/.rpm-complete"
	log "binrpm-pkg done in $(( $(date +%s) - start ))s"
fi

if [ $want_rpm -eq 1 ] && [ ! -f "$out/.rpm-complete" ]; then
	log "rpm-pkg: $src_pkg $pkgver, key $key (log: $out/rpm.log)"
	start=$(date +%s)
	prepare_tree
	# rpmbuild runs its own make from the tarball, out of reach of a
	# command-line LOCALVERSION: a localversion file (in rpm-pkg's tarball
	# list) gives the same release.
	echo "$localversion" >"$tree/localversion-mmtune"
	rel=$(make -s --no-print-directory -C "$tree" kernelrelease)
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
	# MKSPEC: kbuild's spec, renamed (mkspec-mmtune), the build id as
	# its Release.
	export CCACHE_BASEDIR=$top/BUILD MMTUNE_RPM_NAME=$rpm_name MMTUNE_RPM_RELEASE=$build_id
	if ! PATH=/usr/lib/ccache:$PATH INSTALL_MOD_STRIP=1 make -C "$tree" -j"$jobs" \
		MKSPEC="$repo/packaging/kernel/mkspec-mmtune" \
		RPMOPTS="--define '_topdir $top' --nodeps --noclean --define '_binary_payload w6.gzdio'" \
		rpm-pkg >"$out/rpm.log" 2>&1; then
		tail -n 40 "$out/rpm.log" >&2
		die "rpm-pkg failed; full log: $out/rpm.log"
	fi
	rm -rf "$out/rpm"
	mkdir -p "$out/rpm" "$out/unpublished"
	mv "$top"/RPMS/*/*.rpm "$out/rpm/"
	# Userspace headers: never published (see mkspec-mmtune).
	mv "$out"/rpm/"$rpm_name"-headers-*.rpm "$out/unpublished/" 2>/dev/null || true
	# rpm-pkg compiled its own kernel inside rpmbuild: from the same
	# .config, so with the same key outside its tree.
	rtree=$(dirname "$(ls "$top"/BUILD/*/Module.symvers 2>/dev/null | head -n 1)")
	[ "$rtree" != . ] || die "no rpm-pkg build tree under $top/BUILD"
	no_key_in_tree "$rtree"
	keep_cert "$rtree"
	[ -f "$out/kernel.release" ] || echo "$rel" >"$out/kernel.release"
	echo "rpm_seconds: $(( $(date +%s) - start ))" >"$out/rpm-time.txt"
	rm -rf "$top" "$tree"
	touch "$out/.rpm-complete"
	log "rpm-pkg done in $(( $(date +%s) - start ))s"
fi

# --- mmtune-modules-<rel> and mmtune-kernel-<flavour> -------------------------
# From what the kernel packages ship (linux-headers / kernel-devel) and the
# set's key, not from the build tree: what a host-independent rebuild for a
# new mmtune does, and cached by its own inputs (mmtune's sources and
# version, the module packaging), so a change there costs seconds, not a
# kernel build.
rel=$(cat "$out/kernel.release")
build_modules() {
	local kind=$1 stamp=$out/.modules-$1-$modules_key t mtree sign
	[ -f "$stamp" ] && return 0
	t=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-kpkg-modules.XXXXXX")
	case $kind in
	deb) dpkg-deb -x "$(ls "$out"/deb/linux-headers-"$rel"_*.deb)" "$t"
	     mtree=$t/usr/src/linux-headers-$rel ;;
	rpm) (cd "$t" && rpm2cpio "$(ls "$out"/rpm/"$rpm_name"-devel-*.rpm)" | cpio -idm --quiet)
	     mtree=$t/usr/src/kernels/$rel ;;
	esac
	if [ -n "$fleet_key" ]; then sign=$fleet_key; else sign=$sigdir/signing_key.pem; fi
	rm -f "$out/$kind"/mmtune-modules-* "$out/$kind/$meta"[_-]*
	log "mmtune-modules-$rel and $meta (.$kind) from the packaged $kind headers"
	"$repo/packaging/kernel/build-module-pkgs.sh" "$mtree" --"$kind" --out "$out/$kind" \
		--key "$sign" --cert "$sigdir/signing_key.x509" --build "$build_id" --meta "$meta" --kpkg "$rpm_name" \
		>"$out/modules-$kind.log" 2>&1 || { rm -rf "$t"; tail -n 20 "$out/modules-$kind.log" >&2; die "mmtune-modules-$rel (.$kind) failed"; }
	rm -rf "$t"
	rm -f "$out"/.modules-"$kind"-*
	touch "$stamp"
}
[ -f "$out/.deb-complete" ] && build_modules deb
[ -f "$out/.rpm-complete" ] && build_modules rpm

{
	echo "line: $kline"
	echo "source_package: $src_pkg"
	echo "source_version: $pkgver"
	echo "kernelrelease: $rel"
	echo "build_id: $build_id"
	echo "key: $key"
	echo "variant: ${variant:-none}"
	echo "signing_certificate: $(sha256sum <"$sigdir/signing_key.x509" 2>/dev/null | cut -d' ' -f1)${fleet_key:+ (fleet key $fleet_key)}"
	for f in "${fragments[@]}"; do echo "config_fragment: ${f#$repo/} $(sha256sum "$f" | cut -d' ' -f1)"; done
	echo "$series_info"
	cat "$out"/deb-time.txt "$out"/rpm-time.txt 2>/dev/null || true
	# (--deb or --rpm alone: the other directory is missing, which is fine.)
	(cd "$out" && { ls deb/*.deb rpm/*.rpm 2>/dev/null || true; } | sed 's/^/package: /')
	(cd "$out" && { ls unpublished/* 2>/dev/null || true; } | sed 's/^/unpublished: /')
} >"$out/build-info.txt.$$"
mv "$out/build-info.txt.$$" "$out/build-info.txt"
sed 's/^/kernel-pkgs: /' "$out/build-info.txt" >&2
touch "$out/.used"		# mtime = last use, for pruning
# (a variant prunes only its own kind: never the set it varies)
kind=${distro:-test}${variant:+/$variant}
echo "$kind" >"$out/flavour"

# build/packaging/kernel-pkgs-LINE[-<variant>], what make repo and the
# tests take.
mkdir -p "$repo/build/packaging"
ln -sfn "$out" "$repo/build/packaging/kernel-pkgs-$kline${variant:+-$variant}"

# Keep the most recently used package sets of this flavour (test kernel,
# debian-cloud, ...) only: a test-kernel rebuild never prunes an hour-long
# distribution build. Drop unfinished sets (failed or interrupted builds:
# a rerun starts from a fresh tree anyway, ccache is what it resumes from).
# Per line: the sets are LINE-<key> ("6.1-*" does not match "6.12-...").
# Only under the lock (an unfinished set may be another run's build): a
# run that built nothing prunes if the lock is free, else leaves it.
if [ $locked -eq 0 ]; then
	exec 9>"$cache/.build.lock"
	flock -n 9 || exit 0
fi
ls -1t "$cache"/kernel-pkgs/"$kline"-*/.used 2>/dev/null | while read -r used; do
	d=$(dirname "$used")
	if [ "$(cat "$d/flavour" 2>/dev/null || echo test)" = "$kind" ]; then echo "$d"; fi
done | tail -n +$((keep + 1)) |
	while read -r old; do
		log "pruning $old"
		rm -rf "$old"
	done
for d in "$cache"/kernel-pkgs/"$kline"-*/; do
	[ -f "$d/.used" ] || [ "${d%/}" = "$out" ] || rm -rf "$d"
done
exit 0

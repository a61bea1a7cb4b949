#!/bin/bash
# Build mmtune-modules-<kernelrelease> (.deb and/or .rpm): mmtune.ko built
# against a kernel build tree and signed at build time with the key that
# the same kernel build trusts, so hosts running that kernel need no
# compiler, no DKMS and no per-host MOK enrolment (the OpenZFS kmod pattern).
#
#   packaging/kernel/build-module-pkgs.sh TREE [--deb] [--rpm] [--out DIR]
#                                         [--key KEY --cert CERT]
#                                         [--build ID [--meta NAME]]
#                                         [--kpkg NAME]
#
# TREE: a built kernel tree (Module.symvers, include/config/kernel.release,
# CONFIG_MMTUNE_HOOKS=y), or what a headers package ships of one (6.12's
# linux-headers and kernel-devel have include/config/auto.conf and no
# .config: either is read). The key: CONFIG_MODULE_SIG_KEY of TREE's config
# (by default certs/signing_key.pem, made by the kernel build and built into
# its .builtin_trusted_keys as certs/signing_key.x509), the hash
# CONFIG_MODULE_SIG_HASH, the tool TREE/scripts/sign-file. --key/--cert
# override it (a fleet key, or a throwaway one for a kernel without
# CONFIG_MODULE_SIG, whose signatures nothing checks; the tests do that).
#
# --build ID: the build id of the kernel packages of TREE (build-kernel-
# pkgs.sh: the Debian revision of linux-image-<rel>, the RPM release of
# kernel-mmtune...). The module package then depends on exactly that kernel
# build, the one whose key signed it (a module signed for another build is
# refused under module.sig_enforce), and its version carries the id, so a
# rebuilt kernel brings a newer module package. --meta NAME: also the meta
# package NAME (mmtune-kernel-<flavour>), which depends on exactly this
# kernel build and this module package: installing or upgrading it moves
# both or neither. --kpkg NAME: the RPM kernel package of that build
# (build-kernel-pkgs.sh: kernel-mmtune..., kernel-mmtune6.12...); by
# default kernel<localversion> of the release.
#
# Output (default build/packaging/out/modules/):
#   mmtune-modules-<rel>_<ver>[+<id>]_amd64.deb  /lib/modules/<rel>/extra/mmtune.ko
#   mmtune-modules-<rel>-<ver>-<id or 1>.x86_64.rpm
#   NAME_<sublevel>+<id>+<ver>_amd64.deb, NAME-<sublevel>-<id>.<ver>.x86_64.rpm
# The module is stripped of debug info and then signed; the package tools
# must not touch it afterwards (dh_strip, brp-strip and debuginfo are off).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
log() { echo "module-pkgs: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { echo "usage: $0 TREE [--deb] [--rpm] [--out DIR] [--key KEY --cert CERT] [--build ID [--meta NAME]] [--kpkg NAME]" >&2; exit 2; }

[ $# -ge 1 ] || usage
tree=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such kernel tree"
shift
want_deb=0 want_rpm=0 out=$repo/build/packaging/out/modules key='' cert='' build='' meta='' kpkg=''
while [ $# -gt 0 ]; do
	case "$1" in
	--kpkg) kpkg=${2:?}; shift ;;
	--build) build=${2:?}; shift ;;
	--meta) meta=${2:?}; shift ;;
	--deb) want_deb=1 ;;
	--rpm) want_rpm=1 ;;
	--out) out=${2:?}; shift ;;
	--key) key=${2:?}; shift ;;
	--cert) cert=${2:?}; shift ;;
	*) usage ;;
	esac
	shift
done
[ $want_deb -eq 0 ] && [ $want_rpm -eq 0 ] && want_deb=1 want_rpm=1
case "$build" in *[!0-9]*) die "--build: digits only" ;; esac
[ -z "$meta" ] || [ -n "$build" ] || die "--meta needs --build"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# --- the kernel tree --------------------------------------------------------
cfg=$tree/.config
[ -f "$cfg" ] || cfg=$tree/include/config/auto.conf
{ [ -f "$cfg" ] && [ -f "$tree/Module.symvers" ] && [ -f "$tree/include/config/kernel.release" ]; } ||
	die "$tree is not a built kernel tree (.config or include/config/auto.conf, Module.symvers, include/config/kernel.release)"
grep -qx 'CONFIG_MMTUNE_HOOKS=y' "$cfg" ||
	die "$tree has no CONFIG_MMTUNE_HOOKS=y: mmtune.ko cannot be built for it"
rel=$(cat "$tree/include/config/kernel.release")
ver=$("$repo/packaging/version.sh")
# The kernel packages of build-kernel-pkgs.sh for this release: Debian
# linux-image-<rel> <rel>-<id>; RPM kernel<localversion without the build
# id> (kernel-mmtune for 6.1.<n>-mmtune<id>), version <rel with _>,
# release <id>.
sub=${rel%%-*}
rpm_kpkg=${kpkg:-kernel$(sed 's/^-mmtune[0-9]*/-mmtune/' <<<"${rel#"$sub"}")}
mver=$ver deb_kdep=""
if [ -n "$build" ]; then
	mver=$ver+$build deb_kdep=" (= $rel-$build)"
fi
cfgval() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$cfg"; }

# --- the key ------------------------------------------------------------------
hash=$(cfgval CONFIG_MODULE_SIG_HASH)
hash=${hash:-sha256}
if [ -z "$key" ]; then
	[ "$(cfgval CONFIG_MODULE_SIG)" = y ] ||
		die "$rel has no CONFIG_MODULE_SIG (it checks no module signatures); give --key and --cert to sign anyway"
	key=$(cfgval CONFIG_MODULE_SIG_KEY)
	case "$key" in pkcs11:*) ;; /*) ;; *) key=$tree/$key ;; esac
	cert=$tree/certs/signing_key.x509
fi
[ -n "$cert" ] || die "--key needs --cert"
case "$key" in pkcs11:*) ;; *) [ -r "$key" ] || die "signing key $key not readable" ;; esac
[ -r "$cert" ] || die "certificate $cert not readable"

work=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-modules.XXXXXX")
trap 'rm -rf "$work"' EXIT

# scripts/sign-file is only built with CONFIG_MODULE_SIG_FORMAT; build the
# same source otherwise (the test kernel has no module signing).
signfile=$tree/scripts/sign-file
if [ ! -x "$signfile" ]; then
	signfile=$work/sign-file
	# shellcheck disable=SC2046
	cc -o "$signfile" "$tree/scripts/sign-file.c" $(pkg-config --cflags --libs libcrypto) -Wno-deprecated-declarations ||
		die "building scripts/sign-file failed (libssl-dev?)"
fi

# --- build, strip, sign, check --------------------------------------------------
mkdir -p "$work/module"
(cd "$repo/module" && cp Kbuild Makefile ./*.h "$work/module/" &&
	for f in ./*.c; do case "$f" in *.mod.c) ;; *) cp "$f" "$work/module/" ;; esac; done)
log "building mmtune $ver for $rel (log: $out/build-$rel.log)"
make -C "$tree" M="$work/module" modules >"$out/build-$rel.log" 2>&1 ||
	{ tail -n 20 "$out/build-$rel.log" >&2; die "module build failed"; }
ko=$work/module/mmtune.ko
strip --strip-debug "$ko"
"$signfile" "$hash" "$key" "$cert" "$ko" || die "sign-file failed"
vm=$(modinfo -F vermagic "$ko")
[ "${vm%% *}" = "$rel" ] || die "vermagic '$vm' does not start with $rel"
signer=$(modinfo -F signer "$ko")
[ -n "$signer" ] || die "mmtune.ko carries no signature after sign-file"
log "mmtune.ko: vermagic $rel, signer '$signer', $hash, $(stat -c %s "$ko") bytes"

export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}
subst() {
	sed -e "s/@REL@/$rel/g" -e "s/@VERSION@/$mver/g" -e "s/@KDEP@/$deb_kdep/g" \
		-e "s/@META@/$meta/g" -e "s/@MVERSION@/$sub+$build+$ver/g" -e "s/@ID@/$build/g" \
		-e "s/@DATE@/$(date -u -R -d "@$SOURCE_DATE_EPOCH")/g" "$@"
}

# --- .deb (debhelper) -----------------------------------------------------------
if [ $want_deb -eq 1 ]; then
	s=$work/deb/mmtune-modules-$ver
	mkdir -p "$s/debian/source"
	cp "$ko" "$s/mmtune.ko"
	for f in control rules changelog copyright postinst postrm source/format; do
		subst "$repo/packaging/modules/debian/$f" >"$s/debian/$f"
	done
	chmod +x "$s/debian/rules"
	log "dpkg-buildpackage: mmtune-modules-$rel $mver"
	(cd "$s" && dpkg-buildpackage -b -us -uc) >"$out/deb-$rel.log" 2>&1 ||
		{ tail -n 20 "$out/deb-$rel.log" >&2; die "dpkg-buildpackage failed"; }
	mv "$work"/deb/*.deb "$out/"
	log "built $(cd "$out" && ls mmtune-modules-"$rel"_*.deb)"
	if [ -n "$meta" ]; then
		s=$work/meta/$meta
		mkdir -p "$s/debian/source"
		for f in control rules changelog source/format; do
			subst "$repo/packaging/modules/meta/debian/$f" >"$s/debian/$f"
		done
		subst "$repo/packaging/modules/debian/copyright" >"$s/debian/copyright"
		chmod +x "$s/debian/rules"
		(cd "$s" && dpkg-buildpackage -b -us -uc) >"$out/deb-$meta.log" 2>&1 ||
			{ tail -n 20 "$out/deb-$meta.log" >&2; die "dpkg-buildpackage ($meta) failed"; }
		mv "$work"/meta/*.deb "$out/"
		log "built $(cd "$out" && ls "$meta"_*.deb)"
	fi
fi

# --- .rpm -------------------------------------------------------------------------
if [ $want_rpm -eq 1 ]; then
	top=$work/rpm
	mkdir -p "$top/SOURCES"
	cp "$ko" "$top/SOURCES/mmtune.ko"
	log "rpmbuild: mmtune-modules-$rel $ver"
	kargs=()
	[ -z "$build" ] || kargs=(--define "kbuild $build" --define "kpkg $rpm_kpkg" --define "kevr ${rel//-/_}-$build")
	rpmbuild -bb --define "_topdir $top" --define "krel $rel" --define "mmtune_version $ver" "${kargs[@]}" \
		"$repo/packaging/modules/mmtune-modules.spec" >"$out/rpm-$rel.log" 2>&1 ||
		{ tail -n 20 "$out/rpm-$rel.log" >&2; die "rpmbuild failed"; }
	if [ -n "$meta" ]; then
		rpmbuild -bb --define "_topdir $top" --define "meta $meta" --define "ksub $sub" \
			--define "mrel $build.${ver//+/.}" --define "kpkg $rpm_kpkg" --define "kevr ${rel//-/_}-$build" \
			--define "mpkg mmtune-modules-$rel" --define "mevr $ver-$build" \
			"$repo/packaging/modules/mmtune-kernel-meta.spec" >"$out/rpm-$meta.log" 2>&1 ||
			{ tail -n 20 "$out/rpm-$meta.log" >&2; die "rpmbuild ($meta) failed"; }
	fi
	mv "$top"/RPMS/*/*.rpm "$out/"
	log "built $(cd "$out" && ls mmtune-modules-"$rel"-*.rpm ${meta:+"$meta"-*.rpm})"
fi

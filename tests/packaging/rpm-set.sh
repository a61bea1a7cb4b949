#!/bin/bash
# The .rpm half of a kernel package set, checked as far as this machine
# allows ("make check-packaging-rpm [LINE=6.12] [KERNEL_PKGS=SET]"). No
# RPM-based root can be made here (no Fedora, AL2023 or RHEL repository
# is reachable), so the packages go with the host's rpm, --nodeps, into
# a Debian 12 root; nothing is booted.
#
#   tests/packaging/rpm-set.sh [--line 6.1|6.12] KERNEL-PKGS-DIR
#
# KERNEL-PKGS-DIR: the output of build-kernel-pkgs.sh with --rpm (a
# /boot/config-style file: flavour custom; or the test or cloud config).
# Needs the mmtune RPMs of this tree (make packages). What it asserts:
#   names     the kernel RPM named per line (kernel-mmtune, 6.12:
#             kernel-mmtune6.12[-<flavour>]) and its -devel, the release
#             in the version, mmtune-modules-<rel>, the meta package
#   pinning   the meta package requires exactly this build's kernel and
#             mmtune-modules; mmtune-modules exactly this build's kernel
#   no key    no private key in any RPM of the set (the headers RPM in
#             unpublished/ too)
#   modules   mmtune-modules' mmtune.ko: vermagic of the release, signed
#             by the set's key, the signature verifies against the kept
#             certificate
#   install   into a Debian 12 root: the kernel and -devel, then
#             mmtune-dkms and mmtune: DKMS builds, signs (MOK) and installs
#             mmtune for the release from the -devel tree alone; erased;
#             the other order: mmtune-dkms, then -devel, whose files under
#             /usr/src/kernels fire the file trigger that builds mmtune;
#             then mmtune-modules and the meta package: the prebuilt
#             module in place, rpm -q lists the set
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 2
# shellcheck source=tests/packaging/lib.sh
. tests/packaging/lib.sh
# shellcheck source=tests/packaging/full.sh
. tests/packaging/full.sh

usage() { echo "usage: $0 [--line 6.1|6.12] KERNEL-PKGS-DIR" >&2; exit 2; }
line=6.1 kp=''
while [ $# -gt 0 ]; do
	case $1 in
	--line) line=${2:-}; shift ;;
	-*) usage ;;
	*) kp=$1 ;;
	esac
	shift
done
case $line in 6.1|6.12) ;; *) echo "rpm-set: no kernel line '$line' (6.1 or 6.12)" >&2; usage ;; esac
[ -n "$kp" ] || usage
kp=$(realpath "$kp")
work=build/packaging/rpm-set-$line
logs=$work/logs
pk_work=$work pk_logs=$logs
rm -rf "$work"; mkdir -p "$logs"
start=$SECONDS
tap_header

if [ ! -f "$kp/.rpm-complete" ] || [ ! -f "$kp/kernel.release" ]; then
	not_ok "the set $kp has an .rpm half (build-kernel-pkgs.sh --line $line ... --rpm)"
	tap_plan "$tap_n"; exit 1
fi
rel=$(cat "$kp/kernel.release")
ver=$(packaging/version.sh)
rv=${rel//-/_}
build_id=$(cat "$kp/build-id")
cert=$kp/signing/signing_key.x509

# --- names ---------------------------------------------------------------------
# first FILE...: the first that exists (unmatched globs stay as they are).
first() { local f; for f in "$@"; do [ -f "$f" ] && { echo "$f"; return; }; done; }
kpkg=$(for f in "$kp"/rpm/kernel-mmtune*-"$rv"-*.rpm; do case $f in *-devel-*) ;; *) first "$f" ;; esac; done | head -n 1)
dpkg_=$(first "$kp"/rpm/kernel-mmtune*-devel-"$rv"-*.rpm)
mods=$(first "$kp"/rpm/mmtune-modules-"$rel"-*.rpm)
meta=$(first "$kp"/rpm/mmtune-kernel-*.rpm)
for f in "$kpkg" "$dpkg_" "$mods" "$meta"; do
	[ -n "$f" ] || { not_ok "the set has a kernel, kernel-devel, mmtune-modules and meta RPM for $rel (in $kp/rpm)"; tap_plan "$tap_n"; exit 1; }
done
kname=$(rpm -qp --qf '%{NAME}' "$kpkg")
want="kernel-mmtune"
[ "$line" = 6.1 ] || want=kernel-mmtune$line
case $kname in
"$want" | "$want"-*) ok "kernel RPM named for the line: $kname (release $rel, build $build_id)" ;;
*) not_ok "kernel RPM named for the line: $kname (want ${want} or ${want}-<flavour>)" ;;
esac
check "kernel-devel RPM: $kname-devel" test "$(rpm -qp --qf '%{NAME}' "$dpkg_")" = "$kname-devel"
kevr=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$kpkg")
case $kevr in *"$build_id"*) ok "the kernel RPM's version carries the build id: $kevr" ;;
*) not_ok "the kernel RPM's version carries the build id $build_id: $kevr" ;; esac

# --- pinning -------------------------------------------------------------------
mreq=$(rpm -qp --requires "$meta" | tr '\n' ';')
note "$(basename "$meta") requires: $mreq"
mname=$(rpm -qp --qf '%{NAME}' "$mods") mevr=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$mods")
check "meta package $(rpm -qp --qf '%{NAME}' "$meta") requires exactly $kname = $kevr" \
	grep -qF "$kname = $kevr;" <<<"$mreq"
check "meta package requires exactly $mname = $mevr" grep -qF "$mname = $mevr;" <<<"$mreq"
check "$mname requires exactly $kname = $kevr" bash -c "rpm -qp --requires '$mods' | grep -qxF '$kname = $kevr'"

# --- no key --------------------------------------------------------------------
check "no private key in any RPM of the set (contents listed in $logs/contents)" \
	no_private_keys "$kp"/rpm/*.rpm "$kp"/unpublished/*.rpm

# --- modules -------------------------------------------------------------------
tmp=$work/mods
mkdir -p "$tmp"
(cd "$tmp" && rpm2cpio "$kp/rpm/$(basename "$mods")" | cpio -idm --quiet)
ko=$(find "$tmp" -name mmtune.ko | head -n 1)
signer=$(cn "$cert" 2>/dev/null)
if [ -n "$ko" ]; then
	ok "mmtune-modules carries ${ko#"$tmp"}"
	check "mmtune-modules: vermagic of $rel" bash -c "modinfo -F vermagic '$ko' | grep -q '^$rel '"
	check "mmtune-modules: signed by the set's key ('$signer')" ko_signed "$ko" "$signer"
	check "mmtune-modules: the signature verifies against the kept certificate" ko_sig_verifies "$ko" "$cert"
else
	not_ok "mmtune-modules carries mmtune.ko"
fi

# --- install ---------------------------------------------------------------------
# The kernel, -devel, mmtune-dkms and mmtune as check-packaging installs
# them (full.sh's rpm_root_checks: DKMS from -devel alone, MOK signature,
# the preset, mmtune-dkms erased), then this set's prebuilt module.
if ! base=$(tests/packaging/rootfs.sh 2>"$logs/rootfs.log"); then
	not_ok "Debian 12 root (mmdebstrap)"; note "$(tail -n 20 "$logs/rootfs.log")"
	tap_plan "$tap_n"; exit 1
fi
n0=$tap_failed
rpm_root_checks "$base" "$kp" "$rel" "$ver"
r=$pk_work/rpm-root
if [ "$tap_failed" -eq "$n0" ]; then
	rc=0
	out=$(rpm_root "$r" -ivh --nodeps "$mods" "$meta" 2>&1) || rc=$?
	note "$out"
	check "mmtune-modules and the meta package install (rpm exit $rc)" test $rc -eq 0
	check "rpm -q lists the kernel, -devel, mmtune, mmtune-modules and the meta package" \
		rpm --root "$(realpath "$r")" -q "$kname" "$kname-devel" mmtune "$mname" "$(rpm -qp --qf '%{NAME}' "$meta")"
	check "the prebuilt module is in place: /lib/modules/$rel/extra/mmtune.ko" test -f "$r/lib/modules/$rel/extra/mmtune.ko"
fi
rm -rf "$r"
note "rpm-set ($line) took $((SECONDS - start))s; load $(cut -d' ' -f1-3 /proc/loadavg)"
tap_plan "$tap_n"
echo "rpm-set ($line): $((tap_n - tap_failed - tap_skipped)) passed, $tap_failed failed, $tap_skipped skipped"
[ $tap_failed -eq 0 ]

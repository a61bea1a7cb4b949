#!/bin/bash
# DKMS states of mmtune-dkms with the real dkms, dpkg and the kernel hooks
# of a Debian root (tests/packaging/rootfs.sh, cached; copied): Debian 12
# (bookworm, dkms 3.0.10, 6.1) or Debian 13 (trixie, dkms 3.2.2, 6.12).
# The kernel hooks run as that release's kernel packages run them:
# bookworm's "run-parts --report --exit-on-error /etc/kernel/postinst.d",
# trixie's linux-run-hooks (the same over /etc/kernel and
# /usr/share/kernel); the fake kernels are named after the root's line.
#   - installing mmtune-dkms beside Debian's stock headers: one skip line;
#   - a stock kernel's image and headers hooks (dkms's own included): one
#     line, not two, and nothing else about mmtune (dkms leaves it alone);
#   - a kernel with the hooks and no headers: one "no headers yet" line,
#     also from "all" at package configuration;
#   - a kernel with the hooks whose build fails: its headers hooks exit 0
#     (the headers package configures) with one FAILED line and one
#     attempt in /var/log/mmtune-dkms.log, however many packages then put
#     files under /usr/src (the dpkg file trigger fires each time); one more
#     attempt when the kernel's headers change;
#   - "mmtune-dkms-kernel status" names every kernel's state, "dkms status"
#     still says only "added";
#   - why mmtune-dkms keeps its own hooks with this dkms (the control, with
#     AUTOINSTALL="yes" written into the registered dkms.conf): dkms's own
#     hooks then fail the failing kernel's installation (autoinstall exit
#     11, run-parts stops), on 3.0.10 the stock kernel's too (dkms #302);
#     3.2.2 skips the stock kernel by BUILD_EXCLUSIVE_CONFIG itself, with
#     its multi-line warning on every hook run. If a later dkms stops
#     failing the kernel's hooks, this case says so;
#   - both kernel lines in one root (issue 30), in a third copy: a stock
#     6.12 kernel installed from the release's repositories
#     (bookworm-security's on Debian 12, Debian 13's own reinstalled) and
#     a stock 6.1 one: one skip line each, every package configured; our
#     6.1 and 6.12 headers packages installed alone: the /usr/src trigger
#     builds mmtune.ko with DKMS for each (vermagic, one line, one
#     attempt); status says skipped / built for all of them;
#   - the RPM (rpm --root --nodeps into another copy): %post gives one line
#     per kernel, the kernel-install plugin run twice for a stock kernel
#     one line, a failed build not retried by three kernel-devel packages
#     (%triggerin), retried by the next one once the kernel changed, the
#     records gone after rpm -e.
#
#   tests/packaging/dkms-states.sh [ROOT | bookworm | trixie]
#
# ROOT defaults to the cached bookworm root; a suite name makes (or takes
# from the cache) that suite's root. The patched kernel's own packages
# (image, then headers: the trigger builds, status says built) are
# full.sh's dkms_root_checks.
# Needs build/packaging/out/deb (packaging/build.sh deb), or the package
# to test in MMTUNE_DKMS_DEB. Prints ok/FAIL
# per case; exit 0 when all pass.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
# shellcheck disable=SC1091 # tests/packaging/lib.sh, checked on its own
. tests/packaging/lib.sh >/dev/null
case ${1:-bookworm} in
bookworm|trixie) base=$(tests/packaging/rootfs.sh "${1:-bookworm}") || exit 1 ;;
*) base=$1 ;;
esac
ver=$(packaging/version.sh)
deb=${MMTUNE_DKMS_DEB:-build/packaging/out/deb/mmtune-dkms_${ver}_all.deb}
[ -f "$deb" ] || { echo "no $deb: packaging/build.sh deb first"; exit 1; }
osrel() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$base/etc/os-release"; }
suite=$(osrel VERSION_CODENAME)
r=build/packaging/work/dkms-states-$suite
log=$r/var/log/mmtune-dkms.log
helper=/usr/lib/mmtune-dkms/mmtune-dkms-kernel
copy_root "$base" "$r"
for stock in "$r"/usr/src/linux-headers-*-amd64; do stock=${stock##*/linux-headers-}; break; done
# shellcheck disable=SC2016 # a dpkg-query format
dkmsver=$(in_root "$r" dpkg-query -W -f '${Version}' dkms)
echo "root: $(osrel PRETTY_NAME), dkms $dkmsver, stock headers $stock"
# Fake kernels of the root's line, named as that release names its own
# (6.1.0-<abi>-amd64 on Debian 12, 6.12.<n>+deb13-amd64 on Debian 13).
line=$(echo "$stock" | cut -d. -f1-2)
case $suite in
bookworm) k=$line.0-57-amd64 k2=$line.0-58-amd64 ;;
*) k=$line.900+deb13-amd64 k2=$line.901+deb13-amd64 ;;
esac
# The initramfs hook (trixie's stock image brings initramfs-tools) is not
# under test and fails for the fake kernels below; mmtune's and dkms's
# hooks run before it.
rm -f "$r/etc/kernel/postinst.d/initramfs-tools"

n=0 fails=0
case_ok() {	# NAME STATUS OUTPUT
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok   $1"; else fails=$((fails + 1)); echo "FAIL $1"; printf '  | %s\n' "$3"; fi
}
lines() { grep '^mmtune-dkms: ' <<<"$1" || true; }
attempts() { grep -c "^== .* dkms install -m mmtune -v $ver -k $1\$" "$log" 2>/dev/null; }
# image_hooks KVER, headers_hooks KVER: what linux-image-KVER and
# linux-headers-KVER run in their postinst; hooks KVER: both.
image_hooks() {
	if [ -x "$r/usr/bin/linux-run-hooks" ]; then
		in_root "$r" linux-run-hooks image postinst "$1" "/boot/vmlinuz-$1" -- configure
	else
		in_root "$r" run-parts --report --exit-on-error --arg="$1" --arg="/boot/vmlinuz-$1" /etc/kernel/postinst.d
	fi
}
headers_hooks() {
	if [ -x "$r/usr/bin/linux-run-hooks" ]; then
		in_root "$r" linux-run-hooks headers postinst "$1" -- configure
	else
		in_root "$r" run-parts --report --exit-on-error --arg="$1" /etc/kernel/header_postinst.d
	fi
}
hooks() { image_hooks "$1" && headers_hooks "$1"; }
# others OUTPUT: lines of hook output about the mmtune module that are not
# mmtune-dkms's own (dkms's autoinstall prints "mmtune/<ver>", "module(s)
# mmtune"), and errors; not run-parts's "HOOK:" headers or kernel names.
others() {
	grep -vE '^mmtune-dkms: |^/(etc|usr/share)/kernel/[^ ]*:$' <<<"$1" |
		grep -E 'mmtune/|module\(s\) mmtune|BUILD_EXCLUSIVE|Error!|exited with return code' || true
}
# touch_usr_src: a package that puts a file under /usr/src, installed
# (again), which fires mmtune-dkms's dpkg file trigger.
touch_usr_src() {
	local p=$r/var/tmp/usr-src-toucher
	rm -rf "$p"; mkdir -p "$p/DEBIAN" "$p/usr/src/toucher"
	printf 'Package: usr-src-toucher\nVersion: 1.%s\nArchitecture: all\nMaintainer: t <t@t>\nDescription: test\n' "$1" >"$p/DEBIAN/control"
	date +%s%N >"$p/usr/src/toucher/stamp"
	dpkg-deb -b "$p" "$r/var/tmp/toucher.deb" >/dev/null
	in_root "$r" dpkg -i /var/tmp/toucher.deb 2>&1
}

# 1. mmtune-dkms beside Debian's stock headers.
cp "$deb" "$r/var/tmp/"
out=$(in_root "$r" apt-get install -y "/var/tmp/${deb##*/}" 2>&1); rc=$?; out=${out//$'\r'/}
[ $rc = 0 ] && [ "$(lines "$out")" = "mmtune-dkms: $stock has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped (no mmtune knobs on this kernel)" ]
case_ok "apt installs mmtune-dkms beside the stock headers $stock: one skip line" $? "$out"

# 2. A stock kernel: image and headers hooks, as its packages run them.
mkdir -p "$r/lib/modules/$k"
cp "$r/usr/src/linux-headers-$stock/.config" "$r/boot/config-$k"
: >"$r/boot/vmlinuz-$k"
ln -s "/usr/src/linux-headers-$stock" "$r/lib/modules/$k/build"
out=$(hooks "$k" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(lines "$out")" = "mmtune-dkms: $k has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped (no mmtune knobs on this kernel)" ] &&
	[ -z "$(others "$out")" ]
case_ok "stock kernel $k: image and headers hooks (dkms's too) give one skip line, no error, nothing else about mmtune" $? "$out"

# 3. The hooks, no headers: a line from the image hook, and from "all".
h=$line.99-mmtune
mkdir -p "$r/lib/modules/$h"; echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/boot/config-$h"; : >"$r/boot/vmlinuz-$h"
out=$(hooks "$h" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(lines "$out")" = "mmtune-dkms: $h: no headers yet (/lib/modules/$h/build), mmtune.ko is built when linux-headers-$h arrives" ] &&
	[ -z "$(others "$out")" ]
case_ok "kernel with the hooks, no headers: one 'no headers yet' line" $? "$out"
out=$(in_root "$r" dpkg-reconfigure mmtune-dkms 2>&1)
grep -qx "mmtune-dkms: $h: no headers yet .*" <<<"$(lines "$out")" && [ "$(lines "$out" | wc -l)" = 3 ]
case_ok "package configuration: one line for each of the 3 kernels, the one without headers too" $? "$out"

# 4. The hooks, headers whose build fails (no hook API in them).
b=$line.98-mmtune-broken
broken_headers() {
	mkdir -p "$r/lib/modules/$1/build/include"
	echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/lib/modules/$1/build/.config"
	printf 'modules clean:\n\t@echo "no kernel tree here" >&2; exit 2\n' >"$r/lib/modules/$1/build/Makefile"
}
broken_headers "$b"
out=$(headers_hooks "$b" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(lines "$out" | wc -l)" = 1 ] && grep -q "^mmtune-dkms: $b: building mmtune $ver FAILED (dkms exit [0-9]*;" <<<"$out" &&
	[ "$(attempts "$b")" = 1 ] && [ -z "$(others "$out")" ]
case_ok "failing build: the headers hooks (dkms's too) exit 0 with one FAILED line, one attempt in the log" $? "$out"
out=$(for i in 1 2 3; do touch_usr_src "$i"; done)
[ "$(attempts "$b")" = 1 ] && [ -z "$(lines "$out")" ] && grep -q 'Processing triggers for mmtune-dkms' <<<"$out"
case_ok "three packages touching /usr/src (trigger fired each time): no retry, no line; still one attempt" $? "$out; attempts: $(attempts "$b")"
rm "$r/lib/modules/$b/build/.config"; echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/lib/modules/$b/build/.config"
out=$(touch_usr_src 4; touch_usr_src 5)
[ "$(attempts "$b")" = 2 ] && [ "$(lines "$out" | wc -l)" = 1 ]
case_ok "the kernel's headers change: retried once (2 attempts), one FAILED line" $? "$out; attempts: $(attempts "$b")"

# 5. status, and what dkms says.
out=$(in_root "$r" $helper status 2>&1); rc=$?
ds=$(in_root "$r" dkms status -m mmtune 2>&1)
[ $rc = 1 ] && [ "$(wc -l <<<"$out")" = 4 ] &&
	grep -q "^$stock  *skipped (no hooks)" <<<"$out" && grep -q "^$k  *skipped (no hooks)" <<<"$out" &&
	grep -q "^$h  *waiting for headers" <<<"$out" && grep -q "^$b  *failed: dkms exit [0-9]* at " <<<"$out" &&
	[ "$ds" = "mmtune/$ver: added" ]
case_ok "status: skipped, skipped, waiting, failed for the 4 kernels, exit 1; dkms status says only '$ds'" $? "exit $rc; $out"

# 6. The control: what dkms's own autoinstall would do with mmtune (why
# dkms.conf has no AUTOINSTALL and mmtune-dkms keeps its hooks). A stock
# kernel installed now, and the failing kernel's headers hooks again.
sed -i '$a AUTOINSTALL="yes"' "$r/usr/src/mmtune-$ver/dkms.conf"
mkdir -p "$r/lib/modules/$k2"
cp "$r/usr/src/linux-headers-$stock/.config" "$r/boot/config-$k2"
: >"$r/boot/vmlinuz-$k2"
ln -s "/usr/src/linux-headers-$stock" "$r/lib/modules/$k2/build"
sout=$(image_hooks "$k2" 2>&1); src=$?
bout=$(headers_hooks "$b" 2>&1); brc=$?
echo "control: stock $k2: hooks exit $src, $(others "$sout" | wc -l) lines of dkms's about mmtune; failing $b: hooks exit $brc"
case $dkmsver in
3.0.10*)	# dkms #302: the BUILD_EXCLUSIVE skip fails autoinstall
	what="fail the stock kernel's installation (#302) and the failing kernel's"
	[ $src != 0 ] && grep -q 'exited with return code 11' <<<"$sout" ;;
*)	# 3.0.11 on: skipped by dkms itself, exit 0, in several lines
	what="skip the stock kernel themselves (BUILD_EXCLUSIVE_CONFIG, exit 0, a warning block) but fail the failing kernel's installation"
	[ $src = 0 ] && grep -q "Autoinstall on $k2 was skipped for module(s) mmtune" <<<"$sout" ;;
esac && [ $brc != 0 ] && grep -q 'Autoinstall on .* failed\|autoinstall for kernel: .* failed' <<<"$bout"
case_ok "control, AUTOINSTALL=\"yes\" in dkms.conf: dkms $dkmsver's own hooks $what, so mmtune-dkms keeps its hooks" $? "$sout
$bout"

rm -rf "$r"

# 7. The RPM's scriptlets, in a fresh copy (rpm's database there is empty:
# --nodeps; rpm_root of lib.sh: scriptlets chrooted with /proc and /dev).
# kernel_devel_rpm N: a package named kernel-devel, version N, with a file
# under /usr/src/kernels (what fires mmtune-dkms's file trigger).
kernel_devel_rpm() {
	local t=build/packaging/work/dkms-states-kdevel-$suite
	mkdir -p "$t"
	cat >"$t/kd.spec" <<SPEC
Name: kernel-devel
Version: 0.$1
Release: 1
Summary: test
License: none
BuildArch: noarch
%description
test
%install
mkdir -p %{buildroot}/usr/src/kernels/test-$1
echo $1 >%{buildroot}/usr/src/kernels/test-$1/stamp
%files
/usr/src/kernels/test-$1
SPEC
	rpmbuild -bb --quiet --define "_topdir $PWD/$t" "$t/kd.spec" >/dev/null 2>&1 &&
		cp "$t/RPMS/noarch/kernel-devel-0.$1-1.noarch.rpm" "$2/"
}
rpmfile=build/packaging/out/rpm/mmtune-dkms-${ver}-1.noarch.rpm
copy_root "$base" "$r"
b=$line.97-mmtune-broken
broken_headers "$b"
out=$(rpm_root "$r" -ivh --nodeps "$rpmfile" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(lines "$out" | wc -l)" = 2 ] && grep -q "^mmtune-dkms: $stock has no mmtune hooks" <<<"$out" &&
	grep -q "^mmtune-dkms: $b: building mmtune $ver FAILED" <<<"$out" && [ "$(attempts "$b")" = 1 ]
case_ok "rpm -i mmtune-dkms: %post gives one line for each of the 2 kernels (stock skipped, broken FAILED), one attempt" $? "$out"
k=$k2
mkdir -p "$r/lib/modules/$k"
cp "$r/usr/src/linux-headers-$stock/.config" "$r/lib/modules/$k/config"
out=$(in_root "$r" /usr/lib/kernel/install.d/50-mmtune-dkms.install add "$k" "/lib/modules/$k/vmlinuz" 2>&1
	in_root "$r" /usr/lib/kernel/install.d/50-mmtune-dkms.install add "$k" "/lib/modules/$k/vmlinuz" 2>&1)
[ "$(lines "$out")" = "mmtune-dkms: $k has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped (no mmtune knobs on this kernel)" ]
case_ok "kernel-install plugin run twice for a stock kernel (config in /lib/modules/KVER/config, as Fedora): one line" $? "$out"
out=""
for i in 1 2 3; do
	kernel_devel_rpm "$i" "$r/var/tmp" || { out="rpmbuild of the test kernel-devel failed"; break; }
	out+=$(rpm_root "$r" -Uvh --nodeps "$r/var/tmp/kernel-devel-0.$i-1.noarch.rpm" 2>&1)
done
[ "$(attempts "$b")" = 1 ] && [ -z "$(lines "$out")" ] && [ "$(rpm_root "$r" -q kernel-devel)" = kernel-devel-0.3-1.noarch ]
case_ok "three kernel-devel packages (the file trigger each time): no retry of the failed build, no line" $? "$out; attempts: $(attempts "$b")"
rm "$r/lib/modules/$b/build/.config"; echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/lib/modules/$b/build/.config"
kernel_devel_rpm 4 "$r/var/tmp"
out=$(rpm_root "$r" -Uvh --nodeps "$r/var/tmp/kernel-devel-0.4-1.noarch.rpm" 2>&1)
[ "$(attempts "$b")" = 2 ] && [ "$(lines "$out" | wc -l)" = 1 ] && grep -q "^mmtune-dkms: $b: building mmtune $ver FAILED" <<<"$out"
case_ok "the broken kernel's headers change, a fourth kernel-devel: the file trigger retries once (2 attempts), one FAILED line" $? "$out; attempts: $(attempts "$b")"
out=$(rpm_root "$r" -e --nodeps mmtune-dkms 2>&1); rc=$?
[ $rc = 0 ] && [ ! -e "$r/var/lib/mmtune-dkms" ] && [ ! -e "$log" ] && [ -z "$(in_root "$r" dkms status -m mmtune)" ]
case_ok "rpm -e mmtune-dkms: unregistered from DKMS, the per-kernel records and the log gone" $? "$out"
rm -rf "$r" "build/packaging/work/dkms-states-kdevel-$suite"

# 8. Both kernel lines in one root (issue 30): stock kernels of 6.1 and
# 6.12 are skipped with one line each, kernels with the hooks of either
# line get mmtune.ko from DKMS. Real packages where the release has them:
# on Debian 12 the stock 6.12 kernel of bookworm-security
# (linux-image/headers-6.12-cloud-amd64), on Debian 13 its own stock 6.12
# reinstalled; a stock 6.1 kernel on Debian 13 is the fake kernel of case
# 2 with Debian 12's own config (linux-config-6.1 of this host). The
# kernels with the hooks are our headers packages, installed alone (the
# /usr/src trigger builds): 6.1's (.config) and 6.12's (bindeb-pkg gives
# include/config/auto.conf and no .config), from the kernel package sets
# built last (build/packaging/kernel-pkgs-LINE)
# or MMTUNE_DKMS_HOOK_HEADERS (.deb files); a line without one is skipped.
# Downloads are kept in $MMTUNE_CACHE/apt-archives[-SUITE].
hook_headers=()
if [ -n "${MMTUNE_DKMS_HOOK_HEADERS:-}" ]; then
	read -r -a hook_headers <<<"$MMTUNE_DKMS_HOOK_HEADERS"
else
	for d in build/packaging/kernel-pkgs-6.1 build/packaging/kernel-pkgs-6.12; do
		for f in "$d"/deb/linux-headers-*_*.deb; do [ -f "$f" ] && hook_headers+=("$f"); break; done
	done
fi
for l in 6.1 6.12; do
	have=
	for f in "${hook_headers[@]}"; do case ${f##*/} in "linux-headers-$l."*) have=1 ;; esac; done
	[ -n "$have" ] || echo "skip kernel with the hooks, line $l: no headers package (make kernel-packages-cloud LINE=$l, or MMTUNE_DKMS_HOOK_HEADERS)"
done
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
archives=$cache/apt-archives${suite:+-$suite}
[ "$suite" = bookworm ] && archives=$cache/apt-archives	# full.sh's, the same suite
mkdir -p "$archives"
copy_root "$base" "$r"
cp "$deb" "$r/var/tmp/"
in_root "$r" apt-get install -y "/var/tmp/${deb##*/}" >/dev/null 2>&1
: >"$log"
# apt_stock ARGS...: apt-get install in the root with the cached archives.
apt_stock() {
	cp "$archives"/*.deb "$r/var/cache/apt/archives/" 2>/dev/null || true
	in_root "$r" sh -c 'apt-get update -qq >/dev/null 2>&1; apt-get install -y "$@"' sh "$@" 2>&1
	local rc=$?
	cp -n "$r"/var/cache/apt/archives/*.deb "$archives/" 2>/dev/null || true
	rm -f "$r"/var/cache/apt/archives/*.deb
	return $rc
}
case $suite in
bookworm)
	out=$(apt_stock linux-image-6.12-cloud-amd64 linux-headers-6.12-cloud-amd64); rc=$?; out=${out//$'\r'/}
	s12=
	for d in "$r"/usr/src/linux-headers-6.12.*-cloud-amd64; do [ -d "$d" ] && s12=${d##*/linux-headers-}; break; done
	what="apt-get install linux-image-6.12-cloud-amd64 linux-headers-6.12-cloud-amd64 (bookworm-security, $s12)"
	;;
*)
	s12=$stock
	out=$(apt_stock --reinstall "linux-image-$s12" "linux-headers-$s12"); rc=$?; out=${out//$'\r'/}
	what="apt-get install --reinstall linux-image-$s12 linux-headers-$s12"
	;;
esac
[ $rc = 0 ] && [ -n "$s12" ] &&
	[ "$(lines "$out")" = "mmtune-dkms: $s12 has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped (no mmtune knobs on this kernel)" ] &&
	[ -z "$(others "$out")" ] && [ -z "$(in_root "$r" dpkg -l | awk '/^.[^i ] / && $2 ~ /^linux-/')" ] &&
	[ -s "$r/boot/initrd.img-$s12" ]
case_ok "stock 6.12 kernel, real packages: $what: exit 0, every package configured, initramfs made, one skip line, nothing else about mmtune" $? "$out"
if [ "$suite" != bookworm ]; then
	rm -f "$r/etc/kernel/postinst.d/initramfs-tools"	# (a fake kernel, as in case 2)
	k61=6.1.0-57-amd64
	mkdir -p "$r/lib/modules/$k61"
	xzcat /usr/src/linux-config-6.1/config.amd64_none_amd64.xz >"$r/boot/config-$k61" 2>/dev/null
	: >"$r/boot/vmlinuz-$k61"
	out=$(image_hooks "$k61" 2>&1); rc=$?
	[ -s "$r/boot/config-$k61" ] && [ $rc = 0 ] &&
		[ "$(lines "$out")" = "mmtune-dkms: $k61 has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped (no mmtune knobs on this kernel)" ] &&
		[ -z "$(others "$out")" ]
	case_ok "stock 6.1 kernel $k61 (Debian 12's config.amd64_none_amd64): its image hooks give one skip line" $? "$out"
fi
built=()
for f in "${hook_headers[@]}"; do
	hk=${f##*/linux-headers-}; hk=${hk%%_*}
	cp "$f" "$r/var/tmp/"
	t0=$SECONDS
	out=$(in_root "$r" apt-get install -y "/var/tmp/${f##*/}" 2>&1); rc=$?; out=${out//$'\r'/}
	st=$(in_root "$r" dkms status -m mmtune -v "$ver" -k "$hk" 2>&1)
	ko=
	for f2 in "$r/lib/modules/$hk"/updates/dkms/mmtune.ko*; do [ -f "$f2" ] && ko=$f2; break; done
	vm=
	if [ -n "$ko" ]; then
		case $ko in
		*.xz) vm=$(xz -dc "$ko" >"$r/var/tmp/mmtune.ko" && modinfo -F vermagic "$r/var/tmp/mmtune.ko") ;;
		*) vm=$(modinfo -F vermagic "$ko") ;;
		esac
	fi
	cfgsrc=.config; [ -e "$r/usr/src/linux-headers-$hk/.config" ] || cfgsrc=include/config/auto.conf
	[ $rc = 0 ] && [ "$(lines "$out")" = "mmtune-dkms: $hk: built, signed and installed mmtune $ver with DKMS" ] &&
		grep -q ': installed' <<<"$st" && [ "${vm%% *}" = "$hk" ] && [ "$(attempts "$hk")" = 1 ]
	case_ok "kernel with the hooks, line ${hk%.*-*}: apt-get install linux-headers-$hk alone (config: $cfgsrc): the trigger builds with DKMS in $((SECONDS - t0))s, one line, ${ko##*/} vermagic $hk" $? "$out
dkms status: $st; vermagic: $vm; attempts: $(attempts "$hk"); make.log: $(tail -n 15 "$r/var/lib/dkms/mmtune/$ver/build/make.log" 2>/dev/null)"
	built+=("$hk")
done
out=$(in_root "$r" $helper status 2>&1); rc=$?
ok=0
grep -q "^$stock  *skipped (no hooks)" <<<"$out" && grep -q "^$s12  *skipped (no hooks)" <<<"$out" || ok=1
[ "$suite" = bookworm ] || grep -q "^$k61  *skipped (no hooks)" <<<"$out" || ok=1
for hk in "${built[@]}"; do grep -q "^$hk  *built: mmtune $ver installed with DKMS" <<<"$out" || ok=1; done
[ $rc = 0 ] && [ $ok = 0 ]
case_ok "status: both lines' stock kernels skipped (no hooks), the ${#built[@]} kernels with the hooks built, exit 0" $? "exit $rc; $out"
rm -rf "$r"

echo "$((n - fails))/$n cases passed"
[ $fails = 0 ]

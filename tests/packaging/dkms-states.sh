#!/bin/bash
# DKMS states of mmtune-dkms with the real dkms (3.0.10), dpkg and
# run-parts of a Debian 12 root (tests/packaging/rootfs.sh, cached; copied):
#   - installing mmtune-dkms beside Debian's stock headers: one skip line;
#   - a stock kernel's image and headers hooks, run as the kernel packages
#     run them (run-parts of /etc/kernel/postinst.d and header_postinst.d,
#     dkms's own hooks included): one line, not two;
#   - a kernel with the hooks and no headers: one "no headers yet" line,
#     also from "all" at package configuration;
#   - a kernel with the hooks whose build fails: one FAILED line and one
#     attempt in /var/log/mmtune-dkms.log, however many packages then put
#     files under /usr/src (the dpkg file trigger fires each time); one more
#     attempt when the kernel's headers change;
#   - "mmtune-dkms-kernel status" names every kernel's state, "dkms status"
#     still says only "added";
#   - the RPM (rpm --root --nodeps into another copy): %post gives one line
#     per kernel, the kernel-install plugin run twice for a stock kernel
#     one line, a failed build not retried by three kernel-devel packages
#     (%triggerin), retried by the next one once the kernel changed, the
#     records gone after rpm -e.
#
#   tests/packaging/dkms-states.sh [ROOT]
#
# ROOT defaults to the cached root. The patched kernel's own packages
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
base=${1:-$(tests/packaging/rootfs.sh)} || exit 1
ver=$(packaging/version.sh)
deb=${MMTUNE_DKMS_DEB:-build/packaging/out/deb/mmtune-dkms_${ver}_all.deb}
[ -f "$deb" ] || { echo "no $deb: packaging/build.sh deb first"; exit 1; }
r=build/packaging/work/dkms-states
log=$r/var/log/mmtune-dkms.log
helper=/usr/lib/mmtune-dkms/mmtune-dkms-kernel
copy_root "$base" "$r"
for stock in "$r"/usr/src/linux-headers-*-amd64; do stock=${stock##*/linux-headers-}; break; done

n=0 fails=0
case_ok() {	# NAME STATUS OUTPUT
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok   $1"; else fails=$((fails + 1)); echo "FAIL $1"; printf '  | %s\n' "$3"; fi
}
lines() { grep '^mmtune-dkms: ' <<<"$1" || true; }
attempts() { grep -c "^== .* dkms install -m mmtune -v $ver -k $1\$" "$log" 2>/dev/null; }
# hooks KVER: what linux-image-KVER and linux-headers-KVER run.
hooks() {
	in_root "$r" run-parts --report --arg="$1" --arg="/boot/vmlinuz-$1" /etc/kernel/postinst.d
	in_root "$r" run-parts --report --arg="$1" /etc/kernel/header_postinst.d
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
[ $rc = 0 ] && [ "$(lines "$out")" = "mmtune-dkms: $stock has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped; the kernel runs with stock values" ]
case_ok "apt installs mmtune-dkms beside the stock headers $stock: one skip line" $? "$out"

# 2. A stock kernel: image and headers hooks, as its packages run them.
k=6.1.0-57-amd64
mkdir -p "$r/lib/modules/$k"
cp "$r/usr/src/linux-headers-$stock/.config" "$r/boot/config-$k"
ln -s "/usr/src/linux-headers-$stock" "$r/lib/modules/$k/build"
out=$(hooks "$k" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(lines "$out")" = "mmtune-dkms: $k has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped; the kernel runs with stock values" ] &&
	! grep -qE 'Error!|exited with return code' <<<"$out"
case_ok "stock kernel $k: image and headers hooks (dkms's too) give one skip line, no error" $? "$out"

# 3. The hooks, no headers: a line from the image hook, and from "all".
h=6.1.99-mmtune
mkdir -p "$r/lib/modules/$h"; echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/boot/config-$h"
out=$(hooks "$h" 2>&1)
[ "$(lines "$out")" = "mmtune-dkms: $h: no headers yet (/lib/modules/$h/build), mmtune.ko is built when linux-headers-$h arrives" ]
case_ok "kernel with the hooks, no headers: one 'no headers yet' line" $? "$out"
out=$(in_root "$r" dpkg-reconfigure mmtune-dkms 2>&1)
grep -qx "mmtune-dkms: $h: no headers yet .*" <<<"$(lines "$out")" && [ "$(lines "$out" | wc -l)" = 3 ]
case_ok "package configuration: one line for each of the 3 kernels, the one without headers too" $? "$out"

# 4. The hooks, headers whose build fails (no hook API in them).
b=6.1.98-mmtune-broken
mkdir -p "$r/lib/modules/$b/build/include"
echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/lib/modules/$b/build/.config"
printf 'modules clean:\n\t@echo "no kernel tree here" >&2; exit 2\n' >"$r/lib/modules/$b/build/Makefile"
out=$(in_root "$r" /etc/kernel/header_postinst.d/50-mmtune-dkms "$b" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(lines "$out" | wc -l)" = 1 ] && grep -q "^mmtune-dkms: $b: building mmtune $ver FAILED (dkms exit [0-9]*;" <<<"$out" && [ "$(attempts "$b")" = 1 ]
case_ok "failing build: the headers hook exits 0 with one FAILED line, one attempt in the log" $? "$out"
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

rm -rf "$r"

# 6. The RPM's scriptlets, in a fresh copy (rpm's database there is empty:
# --nodeps; rpm_root of lib.sh: scriptlets chrooted with /proc and /dev).
# kernel_devel_rpm N: a package named kernel-devel, version N, with a file
# under /usr/src/kernels (what fires mmtune-dkms's %triggerin).
kernel_devel_rpm() {
	local t=build/packaging/work/dkms-states-kdevel
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
b=6.1.97-mmtune-broken
mkdir -p "$r/lib/modules/$b/build/include"
echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/lib/modules/$b/build/.config"
printf 'modules clean:\n\t@echo "no kernel tree here" >&2; exit 2\n' >"$r/lib/modules/$b/build/Makefile"
out=$(rpm_root "$r" -ivh --nodeps "$rpmfile" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(lines "$out" | wc -l)" = 2 ] && grep -q "^mmtune-dkms: $stock has no mmtune hooks" <<<"$out" &&
	grep -q "^mmtune-dkms: $b: building mmtune $ver FAILED" <<<"$out" && [ "$(attempts "$b")" = 1 ]
case_ok "rpm -i mmtune-dkms: %post gives one line for each of the 2 kernels (stock skipped, broken FAILED), one attempt" $? "$out"
k=6.1.0-58-amd64
mkdir -p "$r/lib/modules/$k"
cp "$r/usr/src/linux-headers-$stock/.config" "$r/lib/modules/$k/config"
out=$(in_root "$r" /usr/lib/kernel/install.d/50-mmtune-dkms.install add "$k" "/lib/modules/$k/vmlinuz" 2>&1
	in_root "$r" /usr/lib/kernel/install.d/50-mmtune-dkms.install add "$k" "/lib/modules/$k/vmlinuz" 2>&1)
[ "$(lines "$out")" = "mmtune-dkms: $k has no mmtune hooks (CONFIG_MMTUNE_HOOKS is not set), mmtune.ko skipped; the kernel runs with stock values" ]
case_ok "kernel-install plugin run twice for a stock kernel (config in /lib/modules/KVER/config, as Fedora): one line" $? "$out"
out=""
for i in 1 2 3; do
	kernel_devel_rpm "$i" "$r/var/tmp" || { out="rpmbuild of the test kernel-devel failed"; break; }
	out+=$(rpm_root "$r" -Uvh --nodeps "$r/var/tmp/kernel-devel-0.$i-1.noarch.rpm" 2>&1)
done
[ "$(attempts "$b")" = 1 ] && [ -z "$(lines "$out")" ] && [ "$(rpm_root "$r" -q kernel-devel)" = kernel-devel-0.3-1.noarch ]
case_ok "three kernel-devel packages (%triggerin each time): no retry of the failed build, no line" $? "$out; attempts: $(attempts "$b")"
rm "$r/lib/modules/$b/build/.config"; echo 'CONFIG_MMTUNE_HOOKS=y' >"$r/lib/modules/$b/build/.config"
kernel_devel_rpm 4 "$r/var/tmp"
out=$(rpm_root "$r" -Uvh --nodeps "$r/var/tmp/kernel-devel-0.4-1.noarch.rpm" 2>&1)
[ "$(attempts "$b")" = 2 ] && [ "$(lines "$out" | wc -l)" = 1 ] && grep -q "^mmtune-dkms: $b: building mmtune $ver FAILED" <<<"$out"
case_ok "the broken kernel's headers change, a fourth kernel-devel: %triggerin retries once (2 attempts), one FAILED line" $? "$out; attempts: $(attempts "$b")"
out=$(rpm_root "$r" -e --nodeps mmtune-dkms 2>&1); rc=$?
[ $rc = 0 ] && [ ! -e "$r/var/lib/mmtune-dkms" ] && [ ! -e "$log" ] && [ -z "$(in_root "$r" dkms status -m mmtune)" ]
case_ok "rpm -e mmtune-dkms: unregistered from DKMS, the per-kernel records and the log gone" $? "$out"
rm -rf "$r" build/packaging/work/dkms-states-kdevel

echo "$((n - fails))/$n cases passed"
[ $fails = 0 ]

#!/bin/sh
# Guest side of tests/packaging/cloud.sh: the Debian 12 cloud-config mmtune
# kernel booted with module.sig_enforce=1, mmtune-modules-<rel> and mmtune
# installed by apt. TAP on /dev/ttyS1. Installed as
# /usr/local/lib/mmtune-e2e/check.sh and run by mmtune-e2e.service after
# multi-user.target.
# shellcheck source=tests/packaging/guest/e2e-lib.sh
. /usr/local/lib/mmtune-e2e/e2e-lib.sh
signer=$(cat $dir/expected-signer)
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s, init $(readlink /proc/1/exe)"
tap_diag "cmdline: $(cat /proc/cmdline)"
[ "$(uname -r)" = "$rel" ] && tap_ok "running the packaged cloud kernel $rel" || tap_not_ok "running the packaged cloud kernel $rel (got $(uname -r))"
[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] && tap_ok "systemd is init" || tap_not_ok "systemd is init"
se=$(cat /sys/module/module/parameters/sig_enforce 2>&1)
[ "$se" = Y ] && tap_ok "module signatures are enforced (module.sig_enforce=1: /sys/module/module/parameters/sig_enforce is Y)" ||
	tap_not_ok "module signatures are enforced (sig_enforce: $se)"

# --- the prebuilt, signed module ------------------------------------------
if grep -q '^mmtune ' /proc/modules; then
	tap_ok "mmtune.ko is loaded at boot (modprobe@mmtune.service) although only signed modules may load"
else
	tap_not_ok "mmtune.ko is loaded at boot"
	tap_diag "$(systemctl status modprobe@mmtune.service --no-pager 2>&1 | tail -n 15)"
	tap_diag "$(dmesg | grep -iE 'mmtune|module|sig' | tail -n 15)"
fi
f=$(modinfo -n mmtune 2>&1)
[ "$f" = "/lib/modules/$rel/extra/mmtune.ko" ] && tap_ok "the loaded module is mmtune-modules-$rel's ($f)" ||
	tap_not_ok "the loaded module is mmtune-modules-$rel's (modinfo -n: $f)"
s=$(modinfo -F signer mmtune 2>&1)
[ "$s" = "$signer" ] && tap_ok "mmtune.ko's signer is the kernel build's key ('$s')" || tap_not_ok "mmtune.ko's signer is '$signer' (got '$s')"
v=$(cat /sys/kernel/mm/mmtune/version 2>&1)
[ "$v" = "$ver" ] && tap_ok "/sys/kernel/mm/mmtune/version is $ver" || tap_not_ok "/sys/kernel/mm/mmtune/version is $ver (got $v)"
# Taint: E (8192) = an unsigned module was loaded; O (4096) = out-of-tree,
# which every module built outside the kernel tree (M=) sets.
t=$(cat /proc/sys/kernel/tainted)
mt=$(cat /sys/module/mmtune/taint 2>&1)
tap_diag "kernel taint $t, mmtune's taint flags '$mt'"
if [ -r /sys/module/mmtune/taint ] && [ $((t & 8192)) -eq 0 ] && [ "${mt#*E}" = "$mt" ]; then
	tap_ok "no 'E' taint: the kernel accepted mmtune.ko's signature (module taint '$mt', O = out of tree)"
else
	tap_not_ok "no 'E' taint (kernel $t, module '$mt')"
fi
# Bad input: the same module without its signature, and signed by a key
# the kernel does not trust. Rejected before "already loaded" is checked.
for bad in unsigned otherkey; do
	out=$(insmod "$dir/mmtune-$bad.ko" 2>&1); rc=$?
	msg=$(dmesg | grep -E 'Loading of .* is rejected' | tail -n 1)
	if [ $rc -ne 0 ] && echo "$out" | grep -q 'Key was rejected by service'; then
		tap_ok "bad input: mmtune.ko $bad is refused: '$out' / dmesg '$msg'"
	else
		tap_not_ok "bad input: mmtune.ko $bad is refused (insmod exit $rc: $out)"
	fi
done
t2=$(cat /proc/sys/kernel/tainted)
[ "$t2" = "$t" ] && tap_ok "taint unchanged after the refused loads ($t2)" || tap_not_ok "taint unchanged after the refused loads ($t -> $t2)"

# --- the default profile --------------------------------------------------
st=$(systemctl is-active mmtune.service 2>&1)
[ "$st" = active ] && tap_ok "mmtune.service is active" || tap_not_ok "mmtune.service is active (got $st)"
tap_diag "$(systemctl status mmtune.service --no-pager 2>&1 | head -n 15)"
rec=$(mmtunectl recommend 2>&1 | head -n 1)
tap_diag "mmtunectl recommend: $rec"
out=$(mmtunectl verify 2>&1); rc=$?
tap_diag "mmtunectl verify:"; tap_diag "$out"
[ $rc -eq 0 ] && tap_ok "mmtunectl verify exits 0" || tap_not_ok "mmtunectl verify exits 0 (got $rc)"
# The cloud kernel's stock values (its .config: THP always, zswap off with
# lzo and zbud) against balanced.conf, the profile a plain host gets.
knob() { printf '%s=%s' "$1" "$(cat "$1" 2>&1)"; }
thp=/sys/kernel/mm/transparent_hugepage/enabled zs=/sys/module/zswap/parameters
got="$(knob $thp) $(knob $zs/enabled) $(knob $zs/compressor) $(knob $zs/zpool) $(knob /sys/kernel/mm/mmtune/swap_slots/cache_size)"
tap_diag "live: $got"
want="$thp=always [madvise] never $zs/enabled=Y $zs/compressor=lz4 $zs/zpool=zsmalloc /sys/kernel/mm/mmtune/swap_slots/cache_size=64"
[ "$got" = "$want" ] && tap_ok "knobs changed from the cloud kernel's stock values (THP always, zswap N lzo zbud) to balanced's" ||
	tap_not_ok "knobs changed to balanced's (want: $want)"

# --- swap round trip ------------------------------------------------------
if mkswap /dev/vdb >/dev/null 2>&1 && swapon /dev/vdb; then
	tap_ok "swap on /dev/vdb (virtio_blk, a signed Debian-config module)"
else
	tap_not_ok "swap on /dev/vdb"
fi
for fill in compressible random; do
	z0=$(vmstat zswpout) p0=$(vmstat pswpout)
	out=$(swap_integrity --size 96 --no-thp --fill $fill 2>&1); rc=$?
	z1=$(vmstat zswpout) p1=$(vmstat pswpout)
	tap_diag "$out"
	tap_diag "zswpout +$((z1 - z0)), pswpout +$((p1 - p0)) pages"
	if [ $rc -eq 0 ]; then
		tap_ok "swap round trip, $fill 96 MiB: every byte equal after swap-out and back (zswpout +$((z1 - z0)), pswpout +$((p1 - p0)))"
	else
		tap_not_ok "swap round trip, $fill 96 MiB (swap_integrity exit $rc)"
	fi
	case $fill in
	compressible) [ $((z1 - z0)) -gt 0 ] && tap_ok "compressible pages went to zswap (lz4, zsmalloc)" || tap_not_ok "compressible pages went to zswap (zswpout +$((z1 - z0)))" ;;
	esac
done
out=$(swap_integrity --size 64 --thp --fill compressible 2>&1); rc=$?
tap_diag "$out"
[ $rc -eq 0 ] && tap_ok "swap round trip, THP 64 MiB compressible: every byte equal" || tap_not_ok "swap round trip, THP 64 MiB (exit $rc)"

# --- rollback ---------------------------------------------------------------
systemctl stop mmtune.service
got="$(knob $thp) $(knob $zs/enabled)"
want="$thp=[always] madvise never $zs/enabled=N"
[ "$got" = "$want" ] && tap_ok "systemctl stop mmtune.service rolls back to the stock values ($got)" || tap_not_ok "stop rolls back (got $got)"

no_failed_units
tap_diag "$(systemd-analyze 2>&1 | head -n 1)"
echo "# e2e: done" >&3

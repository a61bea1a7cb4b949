#!/bin/sh
# Guest side of the prebuilt-module lifecycle (tests/packaging/full.sh,
# lifecycle_checks): one image booted twice. The kernel that booted says
# which half runs:
#   our kernel    apt has installed linux-image-<rel>, mmtune-modules-<rel>
#                 and mmtune <ver> (host side, from the local signed
#                 repository); the profile is in force; "apt-get upgrade"
#                 to <ver>+up1 re-applies it in place (no value ever leaves
#                 the profile's while it runs: a sampler watches them)
#   stock kernel  (installed by apt beside ours, host side) the fallback a
#                 host may boot: mmtunectl says this kernel
#                 has no mmtune hooks, verify exits 5 (not 0), nothing failed
# TAP on /dev/ttyS1; run by mmtune-e2e.service after multi-user.target.
# shellcheck source=tests/packaging/guest/e2e-lib.sh
. /usr/local/lib/mmtune-e2e/e2e-lib.sh
stock=$(cat $dir/expected-stock-release)
bump=$(cat $dir/expected-bump)

not_ii() { dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '$1 != "ii"'; }

# Every value the profile can set that this host has: THP, zswap, the vm
# sysctls it tunes, and every readable and writable mmtune sysfs file.
snapshot() {
	for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
		/sys/module/zswap/parameters/* /proc/sys/vm/swappiness /proc/sys/vm/percpu_pagelist_high_fraction \
		$(find /sys/kernel/mm/mmtune -type f -perm -0600 2>/dev/null | sort); do
		printf '%s=%s\n' "$f" "$(cat "$f" 2>&1)"
	done
}

ours() {
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	tap_ok "running the packaged kernel $rel"
	f=$(modinfo -n mmtune 2>&1)
	if grep -q '^mmtune ' /proc/modules && [ "$f" = "/lib/modules/$rel/extra/mmtune.ko" ]; then
		tap_ok "mmtune.ko from mmtune-modules-$rel is loaded at boot ($f)"
	else
		tap_not_ok "mmtune.ko from mmtune-modules-$rel is loaded at boot (modinfo -n: $f)"
	fi
	modprobe_unit 0
	no_boot_errors
	v=$(cat /sys/kernel/mm/mmtune/version 2>&1)
	[ "$v" = "$ver" ] && tap_ok "/sys/kernel/mm/mmtune/version is $ver" || tap_not_ok "/sys/kernel/mm/mmtune/version is $ver (got $v)"
	st=$(systemctl is-active mmtune.service 2>&1)
	[ "$st" = active ] && tap_ok "mmtune.service is active" || tap_not_ok "mmtune.service is active (got $st)"
	out=$(mmtunectl verify 2>&1); rc=$?
	tap_diag "mmtunectl verify:"; tap_diag "$out"
	[ $rc -eq 0 ] && tap_ok "mmtunectl verify exits 0: the recommended profile is in force" ||
		tap_not_ok "mmtunectl verify exits 0 (got $rc)"

	# --- upgrade in place ----------------------------------------------
	before=$(snapshot)
	tap_diag "tuned values: $(echo "$before" | wc -l) files"
	cursor=$(journalctl -n 0 --show-cursor 2>/dev/null | sed -n 's/^-- cursor: //p')
	# A rollback in between (stop, start) would show for at least one
	# sample: reading every value takes milliseconds, a stop/start cycle
	# runs two Python processes.
	samples=/run/mmtune-e2e-samples
	: >$samples
	(while [ ! -e /run/mmtune-e2e-stop ]; do snapshot | md5sum >>$samples; done) &
	sampler=$!
	out=$(apt-get update 2>&1 && apt-get upgrade -y 2>&1); rc=$?
	touch /run/mmtune-e2e-stop; wait $sampler
	tap_diag "$out"
	got=$(dpkg-query -W -f '${Version}' mmtune)
	if [ $rc -eq 0 ] && [ "$got" = "$bump" ] && [ -z "$(not_ii)" ]; then
		tap_ok "apt-get upgrade from the signed repository: mmtune $ver -> $bump, every package ii"
	else
		tap_not_ok "apt-get upgrade to mmtune $bump (apt exit $rc, mmtune $got, not ii: $(not_ii))"
	fi
	journal=$(journalctl --after-cursor "$cursor" -u mmtune.service -o cat 2>&1)
	tap_diag "journal of mmtune.service during the upgrade:"; tap_diag "$journal"
	if echo "$journal" | grep -q '^Reloaded ' && ! echo "$journal" | grep -qE '^(Stopping|Stopped|Starting|Started) '; then
		tap_ok "the upgrade reloaded mmtune.service (journal: Reloaded, no Stopping or Starting)"
	else
		tap_not_ok "the upgrade reloaded mmtune.service without stopping it"
	fi
	n=$(wc -l <$samples); distinct=$(sort -u $samples | wc -l)
	want=$(echo "$before" | md5sum)
	if [ "$n" -gt 0 ] && [ "$distinct" = 1 ] && [ "$(head -n 1 $samples)" = "$want" ]; then
		tap_ok "no rollback in between: $n samples of every tuned value during the upgrade, all equal to the values before it"
	else
		tap_not_ok "no rollback in between ($n samples, $distinct distinct states)"
	fi
	after=$(snapshot)
	if [ "$after" = "$before" ]; then
		tap_ok "the tuned values after the upgrade are the ones before it"
	else
		tap_not_ok "the tuned values after the upgrade are the ones before it"
		tap_diag "$(printf '%s\n' "$before" >/run/b; printf '%s\n' "$after" | diff /run/b - 2>&1)"
	fi
	out=$(mmtunectl verify 2>&1); rc=$?
	[ $rc -eq 0 ] && tap_ok "mmtunectl verify exits 0 after the upgrade" || { tap_not_ok "mmtunectl verify exits 0 after the upgrade (got $rc)"; tap_diag "$out"; }

	no_failed_units
}

stock() {
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	tap_ok "running the stock Debian kernel $stock, installed by apt beside ours"
	[ ! -e /sys/kernel/mm/mmtune ] && ! grep -q '^mmtune ' /proc/modules &&
		tap_ok "no mmtune module on the stock kernel" || tap_not_ok "no mmtune module on the stock kernel"
	out=$(mmtunectl status 2>&1); rc=$?
	tap_diag "mmtunectl status (exit $rc):"; tap_diag "$out"
	echo "$out" | grep -q 'this kernel has no mmtune hooks' &&
		tap_ok "mmtunectl status says this kernel has no mmtune hooks" ||
		tap_not_ok "mmtunectl status says this kernel has no mmtune hooks"
	out=$(mmtunectl verify 2>&1); rc=$?
	tap_diag "mmtunectl verify:"; tap_diag "$out"
	[ $rc -eq 5 ] && tap_ok "mmtunectl verify exits 5 (kernel without mmtune hooks), not 0" ||
		tap_not_ok "mmtunectl verify exits 5 (got $rc)"
	st=$(systemctl is-active mmtune.service 2>&1)
	tap_diag "$(systemctl status mmtune.service --no-pager 2>&1 | head -n 20)"
	[ "$st" = active ] && tap_ok "mmtune.service is active (the profile's other values applied)" ||
		tap_not_ok "mmtune.service is active (got $st)"
	[ -z "$(not_ii)" ] && tap_ok "every package ii" || tap_not_ok "every package ii ($(not_ii))"
	modprobe_unit 1
	no_boot_errors
	no_failed_units
}

case "$(uname -r)" in
"$rel") ours ;;
"$stock") stock ;;
*) tap_not_ok "booted $rel or $stock (got $(uname -r))" ;;
esac
echo "# e2e: done" >&3

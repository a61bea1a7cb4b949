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
	upgrade_in_place "$bump"

	no_failed_units
}

case "$(uname -r)" in
"$rel") ours ;;
"$stock") stock_kernel_checks "$stock" ;;
*) tap_not_ok "booted $rel or $stock (got $(uname -r))" ;;
esac
echo "# e2e: done" >&3

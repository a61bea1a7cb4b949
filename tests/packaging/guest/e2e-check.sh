#!/bin/sh
# Guest side of the end-to-end test: TAP on /dev/ttyS1.
# shellcheck source=tests/packaging/guest/e2e-lib.sh
. /usr/local/lib/mmtune-e2e/e2e-lib.sh

tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s, init $(readlink /proc/1/exe)"
[ "$(uname -r)" = "$rel" ] && tap_ok "running the packaged kernel $rel" || tap_not_ok "running the packaged kernel $rel (got $(uname -r))"
[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] && tap_ok "systemd is init" || tap_not_ok "systemd is init"

if grep -q '^mmtune ' /proc/modules; then
	tap_ok "mmtune.ko is loaded at boot (modprobe@mmtune.service)"
else
	tap_not_ok "mmtune.ko is loaded at boot"
	tap_diag "$(systemctl status modprobe@mmtune.service 2>&1 | tail -n 15)"
fi
f=$(modinfo -n mmtune 2>&1)
case "$f" in
/lib/modules/$rel/updates/dkms/mmtune.ko*) tap_ok "the loaded module is the DKMS one ($f)" ;;
*) tap_not_ok "the loaded module is the DKMS one (modinfo -n: $f)" ;;
esac
v=$(cat /sys/kernel/mm/mmtune/version 2>&1)
[ "$v" = "$ver" ] && tap_ok "/sys/kernel/mm/mmtune/version is $ver" || tap_not_ok "/sys/kernel/mm/mmtune/version is $ver (got $v)"

st=$(systemctl is-active mmtune.service 2>&1)
if [ "$st" = active ]; then tap_ok "mmtune.service is active"; else tap_not_ok "mmtune.service is active (got $st)"; fi
tap_diag "$(systemctl status mmtune.service --no-pager 2>&1 | head -n 20)"
en=$(systemctl is-enabled mmtune.service 2>&1)
[ "$en" = enabled ] && tap_ok "mmtune.service is enabled" || tap_not_ok "mmtune.service is enabled (got $en)"

out=$(mmtunectl verify 2>&1); rc=$?
tap_diag "mmtunectl verify:"; tap_diag "$out"
[ $rc -eq 0 ] && tap_ok "mmtunectl verify exits 0" || tap_not_ok "mmtunectl verify exits 0 (got $rc)"

no_failed_units
tap_diag "$(systemd-analyze 2>&1 | head -n 1)"
echo "# e2e: done" >&3

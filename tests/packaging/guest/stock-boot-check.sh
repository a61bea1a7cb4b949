#!/bin/sh
# Guest side of tests/packaging/stock-boot.sh: a Debian 12 stock
# kernel booted with the mmtune package installed, without mmtune.ko, or
# (expect-module) with a stand-in mmtune.ko (Debian's dummy.ko under that
# name: what modprobe resolves "mmtune" to is all the unit chain sees).
# TAP on /dev/ttyS1, then the unit powers the VM off.
exec 3>/dev/ttyS1
stty -F /dev/ttyS1 raw -echo 2>/dev/null
export TAP_FD=3
# shellcheck disable=SC1091 # tests/lib/tap.sh, installed beside this script
. /usr/local/lib/mmtune-e2e/tap.sh
# res STATUS NAME: one result from the status of the check before it.
res() { if [ "$1" = 0 ]; then tap_ok "$2"; else tap_not_ok "$2"; fi; }
tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"

if [ -e /usr/local/lib/mmtune-e2e/expect-module ]; then
	grep -q '^dummy ' /proc/modules
	res $? "kernel with an mmtune.ko: modprobe@mmtune.service loaded it at boot (the stand-in, dummy, is in /proc/modules)"
	st=$(systemctl show -p ExecMainStatus --value modprobe@mmtune.service)
	[ "$st" = 0 ]
	res $? "modprobe@mmtune.service: modprobe exit 0 (got $st)"
	loaded=$(systemctl show -p ExecMainExitTimestampMonotonic --value modprobe@mmtune.service)
	applied=$(systemctl show -p ExecMainStartTimestampMonotonic --value mmtune.service)
	[ "${loaded:-0}" -gt 0 ] && [ "$loaded" -lt "${applied:-0}" ]
	res $? "the module was loaded before mmtune.service started ($loaded < $applied us)"
	errs=$(journalctl -b -p err -o cat --no-pager 2>&1)
	! echo "$errs" | grep -qi -e mmtune -e modules-load
	res $? "no error line at boot about mmtune"
	echo "# e2e: done" >&3
	exit 0
fi

! grep -q '^mmtune ' /proc/modules
res $? "stock kernel: no mmtune module"

# The load step ran, found no module, said nothing, failed nothing.
st=$(systemctl show -p ExecMainStartTimestampMonotonic -p ExecMainStatus -p Result modprobe@mmtune.service)
tap_diag "modprobe@mmtune.service: $(echo "$st" | tr '\n' ' ')"
echo "$st" | grep -qx 'ExecMainStartTimestampMonotonic=[1-9][0-9]*' && echo "$st" | grep -qx 'ExecMainStatus=1' &&
	echo "$st" | grep -qx 'Result=success'
res $? "modprobe@mmtune.service ran at boot (modprobe exit 1: no module), result success"
out=$(journalctl -b -u modprobe@mmtune.service -o cat --no-pager 2>&1 | grep -v -e '^Starting' -e '^Finished' -e 'Deactivated successfully' -e '^-- ')
[ -z "$out" ]
res $? "modprobe@mmtune.service logged nothing but its start and end"
[ -z "$out" ] || tap_diag "$out"

# Issue 27.5: no error line at boot about mmtune.
errs=$(journalctl -b -p err -o short-monotonic --no-pager 2>&1)
tap_diag "journal, priority err and above, this boot:"; tap_diag "${errs:-(none)}"
ml=$(journalctl -b -p err -t systemd-modules-load -o cat --no-pager 2>&1)
[ -z "$ml" ] && ! journalctl -b -p err -o cat --no-pager 2>&1 | grep -qi mmtune
res $? "no error line at boot from systemd-modules-load or about mmtune (journalctl -b -p err)"
! find /usr/lib/modules-load.d /etc/modules-load.d /run/modules-load.d -name '*mmtune*' 2>/dev/null | grep -q .
res $? "no mmtune modules-load.d entry"

# The control, after the checks above: what the modules-load.d entry did
# on this kernel, logged to the journal as at boot.
echo mmtune >/run/mmtune-old.conf
SYSTEMD_LOG_TARGET=journal /lib/systemd/systemd-modules-load /run/mmtune-old.conf
journalctl --sync
out=$(journalctl -b -p err -t systemd-modules-load -o cat --no-pager 2>&1)
tap_diag "systemd-modules-load with the old entry, journal at priority err: $out"
echo "$out" | grep -q "Failed to find module 'mmtune'"
res $? "control: the old modules-load.d entry makes systemd-modules-load log \"Failed to find module 'mmtune'\" at priority err"

st=$(systemctl is-active mmtune.service 2>&1)
[ "$st" = active ]
res $? "mmtune.service is active (got $st)"
en=$(systemctl is-enabled mmtune-metrics.timer 2>&1)
[ "$en" = enabled ]
res $? "mmtune-metrics.timer is enabled (got $en)"
failed=$(systemctl list-units --state=failed --no-legend --plain 2>&1)
[ -z "$failed" ]
res $? "no failed units"
[ -z "$failed" ] || tap_diag "$failed"
echo "# e2e: done" >&3

#!/bin/sh
# Guest side of tests/packaging/profiles-boot.sh: a Debian kernel without
# mmtune.ko, the mmtune package installed, mmtune.service enabled with the
# override /etc/mmtune/profile (balanced). Checks that the boot apply did
# not fail, then, for every shipped profile: check, apply (exit 0, no
# failure line, every absent file or feature skipped with its one line),
# each value the profile sets read back from the kernel, verify (5: the
# kernel has no mmtune hooks, nothing else differs), rollback (every knob
# the profiles set back at its boot value). TAP on /dev/ttyS1, then the
# unit powers the VM off.
exec 3>/dev/ttyS1
stty -F /dev/ttyS1 raw -echo 2>/dev/null
export TAP_FD=3
# shellcheck disable=SC1091 # tests/lib/tap.sh, installed beside this script
. /usr/local/lib/mmtune-e2e/tap.sh
# res STATUS NAME: one result from the status of the check before it.
res() { if [ "$1" = 0 ]; then tap_ok "$2"; else tap_not_ok "$2"; fi; }
vendor=/usr/lib/mmtune/profiles
tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"

# knob_path NAME: the kernel file of a kernel knob (nothing for mmtune's).
knob_path() {
	case $1 in
	sysctl.*) echo "/proc/sys/$(echo "${1#sysctl.}" | tr . /)" ;;
	thp.*) echo "/sys/kernel/mm/transparent_hugepage/$(echo "${1#thp.}" | tr . /)" ;;
	zswap.*) echo "/sys/module/zswap/parameters/${1#zswap.}" ;;
	esac
}
# live FILE: its value, the bracketed choice of a THP file.
live() {
	v=$(cat "$1") || return 1
	case $v in *\[*) v=${v#*[}; v=${v%%]*} ;; esac
	echo "$v"
}
# settings PROFILE: "NAME VALUE" of every setting, "?" (optional) dropped.
settings() {
	mmtunectl show "$1" | awk 'NR > 1 && $1 != "file" { v = $2; sub(/^\?/, "", v); print $1, v }'
}
# not_in_force PROFILE OUTPUT: the kernel knobs of PROFILE whose value is
# not in force, and those absent without a skip line in OUTPUT (apply's).
not_in_force() {
	settings "$1" | while read -r k v; do
		path=$(knob_path "$k")
		[ -n "$path" ] || continue
		if [ ! -e "$path" ]; then
			# Absent: its feature's line (zswap, a size), its own line
			# (zswap's zpool on 6.18 and later), the other kernel line's.
			echo "$2" | grep -q -e "^warning: kernel .*is absent.*skipped .*$k" \
				-e "^skipped: .*not on this kernel line.*$k" -e "^skip $k:" ||
				printf ' %s' "$k(absent, no skip line)"
			continue
		fi
		l=$(live "$path")
		case $v in
		'>='*) [ "$l" -ge "${v#>=}" ] ;;
		*) [ "$l" = "$v" ] ;;
		esac || printf ' %s' "$k(wanted $v, live $l)"
	done
}
# snapshot: "FILE=VALUE" of every kernel file a shipped profile sets.
knobs=$(for f in "$vendor"/*.conf; do f=${f##*/}; settings "${f%.conf}"; done | cut -d' ' -f1 | sort -u)
snapshot() {
	for k in $knobs; do
		p=$(knob_path "$k")
		[ -n "$p" ] && [ -e "$p" ] && echo "$p=$(live "$p")"
	done
}
zpool=/sys/module/zswap/parameters/zpool
if [ -d /sys/module/zswap ]; then zswap=present; else zswap=absent; fi
tap_diag "zswap: $zswap; zswap zpool parameter: $([ -e $zpool ] && echo present || echo absent)"

# --- the boot apply ----------------------------------------------------------
st=$(systemctl is-failed mmtune.service 2>&1)
[ "$st" = active ]
res $? "mmtune.service started at boot without failure (is-failed: $st)"
j=$(journalctl -b -u mmtune.service -o cat --no-pager 2>&1)
tap_diag "journal of mmtune.service:"; tap_diag "$j"
echo "$j" | grep -q '^applied profile balanced: '
res $? "the boot apply applied the override's profile, balanced"
! echo "$j" | grep -v -e '^Starting ' -e '^Finished ' | grep -qi -e fail -e error -e refused
res $? "mmtune.service's journal has no failure, error or refusal line"
bad=$(not_in_force balanced "$j")
[ -z "$bad" ]
res $? "after boot every kernel value of balanced is in force, or its absence skipped${bad:+:$bad}"
failed=$(systemctl list-units --state=failed --no-legend --plain 2>&1)
[ -z "$failed" ]
res $? "no failed units"
[ -z "$failed" ] || tap_diag "$failed"

# The boot values: what the kernel had before mmtune.
systemctl stop mmtune.service
boot=$(snapshot)
tap_diag "boot values:"; tap_diag "$boot"
[ -n "$boot" ]
res $? "systemctl stop mmtune.service: boot values read back ($(echo "$boot" | wc -l) kernel files)"

# --- every shipped profile ---------------------------------------------------
for f in "$vendor"/*.conf; do
	p=${f##*/}; p=${p%.conf}
	out=$(mmtunectl check --profile "$p" "$f" 2>&1)
	res $? "$p: mmtunectl check --profile $p $f exits 0"
	[ -z "$out" ] || tap_diag "$out"
	# The pick for this boot, so that verify judges the applied profile.
	echo "$p" >/run/mmtune/profile
	out=$(mmtunectl apply "$p" 2>&1); rc=$?
	tap_diag "mmtunectl apply $p (exit $rc):"; tap_diag "$out"
	[ $rc = 0 ] && ! echo "$out" | grep -qi -e fail -e error -e refused
	res $? "$p: apply exits 0 (got $rc), no failure, error or refusal line"
	sets=$(settings "$p")
	# mmtune's knobs: no mmtune.ko on this kernel, one line for all.
	n=$(echo "$sets" | grep -c '^mmtune\.')
	[ "$n" = 0 ] || [ "$(echo "$out" | grep -c '^warning: kernel feature mmtune is absent')" = 1 ]
	res $? "$p: its $n mmtune knob(s) skipped with one line (no mmtune.ko)"
	bad=$(not_in_force "$p" "$out")
	[ -z "$bad" ]
	res $? "$p: every kernel value of the profile read back from the kernel, or its absence skipped${bad:+:$bad}"
	if [ -d /sys/module/zswap ] && [ ! -e $zpool ] && echo "$sets" | grep -q '^zswap\.zpool '; then
		[ "$(echo "$out" | grep -c 'zswap\.zpool')" = 1 ] &&
			echo "$out" | grep -q '^warning: kernel file of zswap.zpool is absent'
		res $? "$p: zswap's absent zpool parameter skipped in one line"
	fi
	out=$(mmtunectl verify 2>&1); rc=$?
	tap_diag "mmtunectl verify (exit $rc):"; tap_diag "$out"
	[ $rc = 5 ] && echo "$out" | grep -q 'this kernel has no mmtune hooks' &&
		! echo "$out" | grep -qi -e drift -e error
	res $? "$p: verify exits 5 (kernel without mmtune hooks, documented), no drift (got $rc)"
	out=$(mmtunectl rollback 2>&1)
	res $? "$p: rollback exits 0"
	now=$(snapshot)
	[ "$now" = "$boot" ]
	res $? "$p: rollback restored every boot value"
	[ "$now" = "$boot" ] || tap_diag "differ: $(echo "$now" | grep -vxF -e "$boot")"
done
rm -f /run/mmtune/profile

# The service again: start applies balanced, stop rolls back.
systemctl start mmtune.service
st=$?
bad=$(not_in_force balanced "$(journalctl -b -u mmtune.service -o cat --no-pager 2>&1)")
[ $st = 0 ] && [ -z "$bad" ]
res $? "systemctl start mmtune.service: exit $st, every kernel value of balanced in force${bad:+:$bad}"
systemctl stop mmtune.service
[ "$(snapshot)" = "$boot" ]
res $? "systemctl stop mmtune.service restored every boot value"
echo "# e2e: done" >&3

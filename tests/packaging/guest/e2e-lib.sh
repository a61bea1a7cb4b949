# Sourced by the guest checks (e2e-check.sh, cloud-check.sh): TAP on
# /dev/ttyS1 through the project's TAP helper (tests/lib/tap.sh), both
# installed beside them by install_e2e_guest (tests/packaging/lib.sh), and
# the release and version the host expects to find.
exec 3>/dev/ttyS1
stty -F /dev/ttyS1 raw -echo 2>/dev/null
dir=/usr/local/lib/mmtune-e2e
TAP_FD=3
# shellcheck source=tests/lib/tap.sh
. $dir/tap.sh
rel=$(cat $dir/expected-release)
ver=$(cat $dir/expected-version)

# The TAP line every booted check ends with: no systemd unit failed.
no_failed_units() {
	failed=$(systemctl list-units --state=failed --no-legend --plain 2>&1)
	if [ -z "$failed" ]; then tap_ok "no failed units"; else tap_not_ok "no failed units"; tap_diag "$failed"; fi
}

# modprobe_unit STATUS: modprobe@mmtune.service (what loads mmtune.ko,
# systemd/units/mmtune.service.d/10-modprobe.conf) ran at this boot with
# modprobe exit STATUS (0: loaded; 1: no such module, a stock kernel)
# and the unit's result is success either way.
modprobe_unit() {
	st=$(systemctl show -p ExecMainStartTimestampMonotonic -p ExecMainStatus -p Result modprobe@mmtune.service)
	tap_diag "modprobe@mmtune.service: $(echo "$st" | tr '\n' ' ')"
	if echo "$st" | grep -qx 'ExecMainStartTimestampMonotonic=[1-9][0-9]*' &&
		echo "$st" | grep -qx "ExecMainStatus=$1" && echo "$st" | grep -qx 'Result=success'; then
		tap_ok "modprobe@mmtune.service ran at boot: modprobe exit $1, result success"
	else
		tap_not_ok "modprobe@mmtune.service ran at boot: modprobe exit $1, result success"
	fi
}

# no_boot_errors: no line at priority err or above in this boot's journal
# from systemd-modules-load or naming mmtune.
no_boot_errors() {
	# Messages only (-o cat): the host name, in other formats, may say mmtune.
	errs=$(journalctl -b -p err -o cat --no-pager 2>&1)
	ml=$(journalctl -b -p err -t systemd-modules-load -o cat --no-pager 2>&1)
	if [ -z "$ml" ] && ! echo "$errs" | grep -qi mmtune; then
		tap_ok "no error line at boot from systemd-modules-load or about mmtune (journalctl -b -p err)"
	else
		tap_not_ok "no error line at boot from systemd-modules-load or about mmtune (journalctl -b -p err)"
		tap_diag "$(journalctl -b -p err -o short-monotonic --no-pager 2>&1)"
	fi
}

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

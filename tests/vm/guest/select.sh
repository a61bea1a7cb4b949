# Which tests a run chooses, the same on the host (tests/vm/run.sh, bash)
# and in the guest (run-tests.sh, busybox sh): sourced by both.
#
# test_chosen NAME SPEC: SPEC is a comma-separated list of globs (no
# spaces: it travels on the kernel command line as mmtune.tests=SPEC); a
# glob starting with "!" excludes. NAME is chosen when it matches a glob
# without "!" (or SPEC has none) and no glob with "!". NAME is GROUP-NAME
# (tests/vm/guest/groups). Examples: "*", "zswap_large-*",
# "core-*,pcp_high-bounds", "thp_swap-split-churn,pcp_high-reclaim-cap",
# "*,!thp_swap-split-churn,!pcp_high-reclaim-cap" (what tests/run-all.sh's
# split of the 6.1 suite boots twice).
test_chosen() {
	_tc_name=$1 _tc_in=0 _tc_pos=0 _tc_ret=0 _tc_ifs=$IFS
	IFS=,
	set -f
	for _tc_g in $2; do
		case "$_tc_g" in
		!*)
			# shellcheck disable=SC2254 # a glob on purpose
			case "$_tc_name" in ${_tc_g#!}) _tc_ret=1 ;; esac ;;
		*)
			_tc_pos=1
			# shellcheck disable=SC2254
			case "$_tc_name" in $_tc_g) _tc_in=1 ;; esac ;;
		esac
	done
	set +f
	IFS=$_tc_ifs
	[ $_tc_ret = 0 ] || return 1
	[ $_tc_pos = 0 ] || [ $_tc_in = 1 ]
}

# tests_in_order DIR GROUPS: the tests DIR/*.sh in run order: group by
# group as the GROUPS file lists them, a group's tests in name order; the
# tests of a group GROUPS does not list come last (tests/userspace/test_vm_select.py
# fails on them), so none is lost.
tests_in_order() {
	_to_seen=" "
	for _to_g in $(sed -n 's/^\([a-z0-9_]*\)[[:space:]].*/\1/p' "$2") ""; do
		for _to_t in "$1"/*.sh; do
			[ -e "$_to_t" ] || continue
			case " $_to_seen " in *" $_to_t "*) continue ;; esac
			case "${_to_t##*/}" in "$_to_g"-*) ;; *) [ -z "$_to_g" ] || continue ;; esac
			_to_seen="$_to_seen$_to_t "
			echo "$_to_t"
		done
	done
}

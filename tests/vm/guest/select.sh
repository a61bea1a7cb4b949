# Which tests a run chooses, the same on the host (tests/vm/run.sh, bash)
# and in the guest (run-tests.sh, busybox sh): sourced by both.
#
# test_chosen NAME SPEC: SPEC is a comma-separated list of globs (no
# spaces: it travels on the kernel command line as mmtune.tests=SPEC); a
# glob starting with "!" excludes. NAME is chosen when it matches a glob
# without "!" (or SPEC has none) and no glob with "!". Examples: "*",
# "3*", "39-*,48-*", "*,!39-*,!48-*" (what run-tests.sh's split of the
# 6.1 suite boots twice, see tests/run-all.sh).
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

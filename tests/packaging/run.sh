#!/bin/bash
# Packaging tests, as TAP.
#
#   tests/packaging/run.sh --quick   mmtune and mmtune-dkms .deb/.rpm: build,
#                                    lintian, rpmlint, versions, file lists,
#                                    conffiles, maintainer scripts (seconds;
#                                    part of "make check")
#   tests/packaging/run.sh [--full]  the above, plus the kernel packages, DKMS
#                                    in a Debian 12 root against the patched
#                                    and the stock headers, the .ko in the VM,
#                                    the RPMs in a scratch root, and the end-
#                                    to-end install and boot ("make
#                                    check-packaging"; see packaging/PACKAGING.md for times)
#
# Logs: build/packaging/logs/. Caches (kernel packages, Debian root) live in
# $MMTUNE_CACHE (default ~/.cache/mmtune).
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
mode=full
case "${1:-}" in
--quick) mode=quick ;;
--full|'') mode=full ;;
*) echo "usage: $0 [--quick|--full]" >&2; exit 2 ;;
esac

. tests/packaging/lib.sh
. tests/packaging/quick.sh
. tests/packaging/full.sh

start=$(date +%s)
tap_header
if ! grep -qE '^install:' systemd/Makefile 2>/dev/null; then
	skip "packaging suite" "systemd/Makefile has no install target yet: the mmtune tools package needs it (issue 7)"
else
	if ! quick_checks; then
		skip "kernel packages, DKMS, RPM and end-to-end tests" "the mmtune packages did not build"
	elif [ $mode = full ]; then
		full_checks
	fi
fi
tap_plan "$tap_n"
echo "# packaging ($mode) in $(( $(date +%s) - start ))s"
echo "packaging: $((tap_n - tap_failed - tap_skipped)) passed, $tap_failed failed, $tap_skipped skipped"
[ $tap_failed -eq 0 ]

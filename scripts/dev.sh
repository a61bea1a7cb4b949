#!/bin/bash
# Entry point for a fresh Debian 12 machine: install what is missing, then
# run a make target.
#
#   scripts/dev.sh run     build what is missing, boot it, show mmtune
#   scripts/dev.sh check   build what is missing, run the test suites
#                          (the README's test command)
#   scripts/dev.sh check-vm  the VM tests check leaves out (CI runs both)
#   scripts/dev.sh check-packaging   the long packaging suite (README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
run|check|check-vm|check-packaging) ;;
*) echo "usage: $0 run|check|check-vm|check-packaging" >&2; exit 2 ;;
esac
# make check's results count the time from here (results/check-times.tsv).
export MMTUNE_CHECK_T0=${MMTUNE_CHECK_T0:-$(date +%s)}
scripts/setup-host.sh
exec make --no-print-directory "$1"

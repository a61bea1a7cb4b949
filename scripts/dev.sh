#!/bin/bash
# Entry point for a fresh Debian 12 machine: install what is missing, then
# run a make target.
#
#   scripts/dev.sh run     build what is missing, boot it, show mmtune
#   scripts/dev.sh check   build what is missing, run every test suite
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
run|check) ;;
*) echo "usage: $0 run|check" >&2; exit 2 ;;
esac
scripts/setup-host.sh
exec make --no-print-directory "$1"

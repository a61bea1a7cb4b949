#!/bin/bash
# A kernel line is a row of data plus its series: this adds a throwaway
# line, kernel-patches/rowtest (6.12's row and series under another name),
# and shows, as TAP, that the build, the VM runner, make and the static
# checks take it with no other change. Prepare only: no kernel is compiled
# (about a minute: copying and patching the tree, configuring it).
# Everything it adds (the directory, build/rowtest, its cache trees) is
# removed at the end, also on failure or interrupt.
#
#   scripts/check-new-line.sh [FROM]      (FROM: the line copied, default 6.12)
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
from=${1:-6.12}
new=rowtest
cd "$repo" || exit 1
. tests/lib/tap.sh
[ -f "kernel-patches/$from/line.conf" ] || { echo "usage: $0 [FROM] (a line with a line.conf)" >&2; exit 2; }
[ ! -e "kernel-patches/$new" ] || { echo "check-new-line: kernel-patches/$new exists already" >&2; exit 2; }
log=$(mktemp) out=$(mktemp)
cleanup() { rm -rf "kernel-patches/$new" "build/$new" "$cache"/kernels/"$new"-* "$log" "$out"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# check NAME CMD...: one test point, the command's output kept in $log.
check() {
	local name=$1
	shift
	if "$@" >"$log" 2>&1; then
		tap_ok "$name"
	else
		tap_not_ok "$name"
		sed 's/^/# /' "$log"
	fi
}
# in_out PATTERN: $out has a line matching PATTERN, else it is shown.
in_out() { grep -qE "$1" "$out" || { cat "$out"; false; }; }

tap_header
tap_plan 8
cp -r "kernel-patches/$from" "kernel-patches/$new"
check "the row and series of $from, copied as kernel-patches/$new, is a kernel line" \
	bash -c 'repo=$PWD; . scripts/kernel-lib.sh; kernel_lines | grep -qx "$1"' _ "$new"
t0=$SECONDS
check "scripts/kernel-build.sh $new --prepare patches and configures it ($(grep -cv '^#' "kernel-patches/$new/series") patches)" \
	scripts/kernel-build.sh "$new" --prepare
tree=$(sed -n 's/.*dry run: not built; tree \([^,]*\),.*/\1/p' "$log")
tap_diag "prepared in $((SECONDS - t0)) s (of $SECONDS s so far): $tree"
check "the prepared tree has the series applied and the hooks configured" \
	grep -qx 'CONFIG_MMTUNE_HOOKS=y' "$tree/.config"
check "make modules LINE=$new builds in build/$new/{kernel,module,kmod}" \
	bash -c 'env -u KDIR make -n --no-print-directory modules LINE="$1" MAKE="echo make" | tee /dev/stderr |
		grep -q "^make -C $2/build/$1/kernel M=$2/build/$1/module modules$" &&
		env -u KDIR make -n --no-print-directory modules LINE="$1" MAKE="echo make" 2>/dev/null |
		grep -q "^make -C $2/build/$1/kernel M=$2/build/$1/kmod modules$"' _ "$new" "$repo"
check "make check-matrix runs its build matrix, planned from its row as $from's (check-build-matrix.sh --plan)" \
	bash -c 'make -n --no-print-directory check-matrix | grep -qE "for l in( [^;]*)? $1( |;)" &&
		p=$(scripts/check-build-matrix.sh "$1" --plan) && echo "$p" &&
		[ "$(echo "$p" | sed "s/line $1:/line L:/")" = "$(scripts/check-build-matrix.sh "$2" --plan | sed "s/line $2:/line L:/")" ] &&
		echo "$p" | grep -qE "^1\.\.([2-9]|[1-9][0-9]+)$"' _ "$new" "$from"
env -u KDIR tests/vm/run.sh --line "$new" --tests 'core-module-load' >"$out" 2>&1
check "tests/vm/run.sh --line $new looks for its kernel in build/$new/kernel" \
	in_out "no kernel at $repo/build/$new/kernel/arch/x86/boot/bzImage \\(make kernel LINE=$new\\)"
check "the static checks check its series" \
	bash -c 'scripts/check-style-docs.sh --docs | grep -qE "^ok [0-9]+ series kernel-patches/$1$"' _ "$new"
check "tests/run-all.sh runs its VM suite (vm-$new)" \
	bash -c 'MMTUNE_RUN_ALL_LIST=1 tests/run-all.sh | grep -qx "vm-$1"' _ "$new"
[ "$tap_failed" -eq 0 ]

#!/bin/bash
# Static checks as TAP: checkpatch.pl (kernel style) on the module, the test
# modules and the kernel patches; get_abi.pl (ABI document format) on
# sysfs-docs/. Both tools come from the kernel tree we build against; their
# warnings count as failures.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
kdir=${KDIR:-$repo/build/kernel}
cd "$repo"
. tests/lib/tap.sh

checks=()
# Tracked sources only: kbuild's generated *.mod.c are not ours.
for f in $(git ls-files 'module/*.[ch]' 'tests/kmod/*.c' 2>/dev/null ||
	ls module/*.[ch] tests/kmod/*.c | grep -v '\.mod\.c$'); do
	checks+=("checkpatch $f")
done
# The cover letter has no diff to check.
for p in kernel-patches/6.1/0*.patch; do
	case "$p" in */0000-cover-letter.patch) continue ;; esac
	checks+=("checkpatch $p")
done
checks+=("get_abi validate sysfs-docs" "get_abi rest sysfs-docs")

# Drop TRAILING_SEMICOLON reports whose line in the patch defines an
# MMTUNE_HOOK X-macro; pass everything else through.
xmacro_ok() {
	local patch=$1 line n
	while IFS= read -r line; do
		if [[ $line == *TRAILING_SEMICOLON* ]]; then
			n=${line#*.patch:}; n=${n%%:*}
			sed -n "${n}p" "$patch" | grep -q '^+#define MMTUNE_HOOK' && continue
		fi
		printf '%s\n' "$line"
	done
}

tap_header
tap_plan ${#checks[@]}
for c in "${checks[@]}"; do
	set -- $c
	case "$1" in
	checkpatch)
		flags=(--no-tree --terse --show-types)
		case "$2" in *.patch) ;; *) flags+=(-f) ;; esac
		# From the kernel tree: inside our git checkout checkpatch
		# misreads a patch's blank context lines as trailing whitespace.
		# One exception, the hook table's X-macros that declare the
		# ops members (as lsm_hooks.h does): TRAILING_SEMICOLON on a
		# "#define MMTUNE_HOOK" line of mmtune_hooks.h.
		out=$(cd "$kdir" && perl scripts/checkpatch.pl "${flags[@]}" "$repo/$2" 2>&1 |
			grep -E '(ERROR|WARNING|CHECK):' | xmacro_ok "$repo/$2") ;;
	get_abi)
		out=$(perl "$kdir/scripts/get_abi.pl" --dir "$3" "$2" 2>&1 >/dev/null) ;;
	esac
	if [ -z "$out" ]; then
		tap_ok "$c"
	else
		tap_not_ok "$c"
		tap_diag "$out"
	fi
done
[ "$tap_failed" -eq 0 ]

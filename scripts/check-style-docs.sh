#!/bin/bash
# Static checks as TAP: checkpatch.pl (kernel style) on the module, the test
# modules and the kernel patches; get_abi.pl (ABI document format) on
# sysfs-docs/. Both tools come from the kernel tree we build against (the
# first line's, 6.1: KDIR, default build/6.1/kernel); the patches of the
# other lines (kernel-patches/6.12) are checked with the checkpatch.pl of
# that line's pristine source (its row's source package, unpacked once into
# the cache by scripts/kernel-lib.sh). Their warnings count as
# failures. Also, without the kernel tree: per line, the series file, the
# [PATCH i/N] numbering and the cover letter's list agree; and the docs
# (every tracked *.md) say what is true now: no issue numbers, no dated run
# logs, README.md at most 300 lines, and the repository paths the top-level
# docs name exist.
#
#   scripts/check-style-docs.sh          everything (needs the first line's tree: KDIR)
#   scripts/check-style-docs.sh --docs   only what needs no kernel tree
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
cd "$repo"
log() { echo "$*" >&2; }
die() { echo "$*"; exit 1; }
. scripts/kernel-lib.sh
. tests/lib/tap.sh
docs_only=
case "${1:-}" in
--docs) docs_only=1 ;;
"") ;;
*) echo "usage: $0 [--docs]" >&2; exit 2 ;;
esac

# The kernel lines: kernel-patches/LINE with a row (line.conf). The first
# is the tree we build against ($kdir).
mapfile -t lines < <(kernel_lines)
kdir=${KDIR:-$repo/build/${lines[0]}/kernel}
declare -A line_tree=([${lines[0]}]=$kdir)
# line_tree LINE: sets line_tree[LINE] to that line's pristine tree, or to
# "" with the reason in line_skip[LINE].
declare -A line_skip=()
find_line_tree() {
	local line=$1 out
	[ -n "${line_tree[$line]+x}" ] && return
	out=$( (
		kernel_line "$line"
		kernel_source >/dev/null 2>&1 || die "$src_pkg is not installed (apt-get install $src_pkg, from bookworm-security for 6.12)"
		echo "$pristine"
	) ) && [ -f "$out/scripts/checkpatch.pl" ] && { line_tree[$line]=$out; return; }
	line_tree[$line]=""
	line_skip[$line]=${out:-no pristine tree}
}

checks=()
if [ -z "$docs_only" ]; then
	# Tracked sources only: kbuild's generated *.mod.c are not ours.
	for f in $(git ls-files 'module/*.[ch]' 'tests/kmod/*.c' 2>/dev/null ||
		ls module/*.[ch] tests/kmod/*.c | grep -v '\.mod\.c$'); do
		checks+=("checkpatch $f")
	done
	# The cover letter has no diff to check.
	for line in "${lines[@]}"; do
		for p in kernel-patches/$line/0*.patch; do
			case "$p" in */0000-cover-letter.patch) continue ;; esac
			checks+=("checkpatch $p $line")
		done
	done
	checks+=("get_abi validate sysfs-docs" "get_abi rest sysfs-docs")
fi
for line in "${lines[@]}"; do
	checks+=("series kernel-patches/$line")
done
checks+=("docs-length README.md 300")
for f in $(git ls-files '*.md'); do
	checks+=("docs-now $f")
done
# The docs whose paths are written from the repository's top.
for f in README.md NEWS.md kernel-patches/README.md tests/README.md tests/bench/README.md; do
	[ -f "$f" ] && checks+=("docs-paths $f")
done
# Measured tables: each results/*.tsv names its command, date, commit and
# machine, and the docs' results regions are what make results renders.
checks+=(results-rendered results-tests)

# subject PATCH: its Subject, unfolded.
subject() {
	awk '/^Subject: / { s = substr($0, 10); while ((getline l) > 0 && l ~ /^[ \t]/) s = s l; print s; exit }' "$1"
}

# series_problems DIR: "series" lists every patch but the cover letter, in
# file name order; patch i of N has Subject "[PATCH i/N] ...", the cover
# letter "[PATCH 0/N] ..." and, under "NAME (N):", every patch's title in
# order. Prints what disagrees.
series_problems() {
	local dir=$1 p i=0 n want titles=
	local files=()
	for p in "$dir"/0*.patch; do
		case "$p" in */0000-cover-letter.patch) ;; *) files+=("${p##*/}") ;; esac
	done
	n=${#files[@]}
	[ "$(awk '!/^#/ && NF { print $1 }' "$dir/series")" = "$(printf '%s\n' "${files[@]}")" ] ||
		echo "$dir/series does not list the ${n} patches in file name order"
	for p in "${files[@]}"; do
		i=$((i + 1))
		want="[PATCH $i/$n] "
		case "$(subject "$dir/$p")" in
		"$want"*) titles+="$(subject "$dir/$p" | cut -c$((${#want} + 1))-)"$'\n' ;;
		*) echo "$p: Subject '$(subject "$dir/$p")' does not start with '$want'" ;;
		esac
	done
	p=$dir/0000-cover-letter.patch
	case "$(subject "$p")" in
	"[PATCH 0/$n] "*) ;;
	*) echo "$p: Subject does not start with '[PATCH 0/$n] '" ;;
	esac
	# The shortlog: "  title" lines, a long one continued on "    " lines.
	[ "$(awk -v n="$n" '$0 ~ " \\(" n "\\):$" { on = 1; next }
		on && /^$/ { exit }
		on && /^    / { sub(/^ +/, " "); t = t $0; next }
		on { if (t != "") print t; t = substr($0, 3) }
		END { if (t != "") print t }' "$p")"$'\n' = "$titles" ] ||
		echo "$p: the list under 'NAME ($n):' is not the $n patch titles in order"
}

# docs_history DOC: lines that tell history instead of what is true now:
# a project issue number ("issue 27"; another project's "issue #302" is
# a reference), or a date (a dated run log). Versions are fine.
docs_history() {
	grep -n -i -E '\bissues? [0-9]+|\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b' "$1" |
		sed "s|^|$1:|"
}

# docs_paths DOC: repository paths the doc names in backticks (under a
# top-level directory, or a top-level file) that do not exist. Skipped:
# patterns and placeholders (*, <...>, {..}, an upper-case word such as
# LINE or NN, foo); a built foo.ko whose foo.c is there; a trailing
# ":line" or ", ...".
docs_paths() {
	local p f
	# shellcheck disable=SC2016 # backquotes, not an expansion
	grep -o '`[^` ]*`' "$1" | tr -d '`' | sort -u | while read -r p; do
		f=${p%%:*}
		case "$f" in
		kernel-patches/* | module/* | packaging/* | scripts/* | sysfs-docs/* | systemd/* | tests/* | .ci/* | *.md | Makefile) ;;
		*) continue ;;
		esac
		case "$f" in *[][*\<\>{}]* | *foo*) continue ;; esac
		[[ $f =~ (^|/|-)[A-Z][A-Z0-9_]+(/|-|$) ]] && continue
		[ -e "$f" ] && continue
		case "$f" in *.ko) [ -e "${f%.ko}.c" ] && continue ;; esac
		echo "$1: \`$p\` does not exist"
	done
}

# Drop TRAILING_SEMICOLON and MACRO_ARG_UNUSED (6.12's checkpatch) reports
# whose line in the patch defines a hook-table X-macro (MMTUNE_HOOK, or the
# per-class MMTUNE_INLINE_* and MMTUNE_WRAPPER_* it expands to); pass
# everything else through.
xmacro_ok() {
	local patch=$1 line n
	while IFS= read -r line; do
		if [[ $line == *TRAILING_SEMICOLON* || $line == *MACRO_ARG_UNUSED* ]]; then
			n=${line#*.patch:}; n=${n%%:*}
			sed -n "${n}p" "$patch" |
				grep -Eq '^\+#define MMTUNE_(HOOK|INLINE_|WRAPPER_)' && continue
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
		# A patch's Fixes: tag names an upstream commit that the
		# Debian source tree, which has no upstream history, cannot
		# look up: that one check is left to upstream review.
		case "$2" in *.patch) flags+=(--ignore UNKNOWN_COMMIT_ID) ;; *) flags+=(-f) ;; esac
		# compat.h is the one place that tells kernel lines apart by
		# version (kernel-patches/README.md, "Kernel lines"); anywhere else checkpatch
		# keeps refusing LINUX_VERSION_CODE.
		[ "$2" = module/compat.h ] && flags+=(--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON)
		# A patch is checked with its own line's checkpatch.
		tree=$kdir
		if [ -n "${3:-}" ]; then
			find_line_tree "$3"
			tree=${line_tree[$3]}
			if [ -z "$tree" ]; then
				tap_skip "$c" "${line_skip[$3]}"
				continue
			fi
		fi
		if [ ! -f "$tree/scripts/checkpatch.pl" ]; then
			tap_not_ok "$c"
			tap_diag "no kernel tree with scripts/checkpatch.pl at $tree (make kernel, or KDIR=TREE)"
			continue
		fi
		# From the kernel tree: inside our git checkout checkpatch
		# misreads a patch's blank context lines as trailing whitespace.
		# One exception, the hook table's X-macros (as lsm_hooks.h's):
		# TRAILING_SEMICOLON on the two that declare the ops members,
		# MACRO_ARG_UNUSED on those that need only some columns of a
		# row ("#define MMTUNE_HOOK", MMTUNE_INLINE_*, MMTUNE_WRAPPER_*).
		out=$(cd "$tree" && perl scripts/checkpatch.pl "${flags[@]}" "$repo/$2" 2>&1 |
			grep -E '(ERROR|WARNING|CHECK):' | xmacro_ok "$repo/$2") ;;
	get_abi)
		out=$(perl "$kdir/scripts/get_abi.pl" --dir "$3" "$2" 2>&1 >/dev/null) ;;
	series)
		out=$(series_problems "$2") ;;
	docs-length)
		out=$(awk -v max="$3" 'END { if (NR > max) print FILENAME ": " NR " lines, at most " max }' "$2") ;;
	docs-now)
		out=$(docs_history "$2") ;;
	docs-paths)
		out=$(docs_paths "$2") ;;
	results-rendered)
		out=$(scripts/render-results.py --check 2>&1) ;;
	results-tests)
		out=$(python3 -m pytest -q -p no:cacheprovider tests/bench/test_results.py 2>&1) && out= ;;
	esac
	if [ -z "$out" ]; then
		tap_ok "$c"
	else
		tap_not_ok "$c"
		tap_diag "$out"
	fi
done
[ "$tap_failed" -eq 0 ]

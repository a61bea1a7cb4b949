#!/bin/bash
# Build matrix as TAP: a kernel line's patch series and the module under
# the kernel configurations a distribution or a user may choose, without
# building a kernel. One script for every line: what differs per line is
# data in its row, kernel-patches/LINE/line.conf (matrix_configs,
# stock_fixes). make check-matrix runs it for every line.
#
#   scripts/check-build-matrix.sh LINE [--fresh|--plan] [CONFIG...]
#
# --plan: print the TAP plan and what is checked (the touched objects, the
# identity set, the mmtune exports), then stop: nothing is built.
#
# CONFIG (default: the row's matrix_configs, in this order):
#   test       the test kernel's config (scripts/kernel-lib.sh:
#              x86_64_defconfig + kvm_guest.config + the row's fragments)
#   hooks-off  test + CONFIG_MMTUNE_HOOKS=n
#   swap-off   test + CONFIG_SWAP=n
#   zswap-off  test + CONFIG_ZSWAP=n
#   thp-off    test + CONFIG_TRANSPARENT_HUGEPAGE=n
#   smp-off    test + CONFIG_SMP=n
#   debian     Debian's generic amd64 config (linux-config-LINE) adapted
#              by packaging/kernel/distro-config.sh (hooks on)
#   bisect     not a configuration: the series applied patch by patch to
#              a tree of its own, and after each patch the objects the
#              series touches compiled under test and hooks-off
#
# Test points: the series applies (once: one patched source tree for all
# configurations), then per configuration
#   config   "make olddefconfig" kept the requested setting
#   compile  the objects the series touches (the "+++ b/*.c" files of the
#            patches, those this configuration builds) compile with W=1
#            and without any warning
#   exports  with the hooks off no mmtune export (EXPORT_SYMBOL*(sym,
#            MMTUNE) in the patches) is in those objects; with the hooks
#            on each one whose object is built is there, GPL-only, in
#            namespace MMTUNE (__ksymtab* up to 6.4, .export_symbol after)
#   module   "make M=module" (W=1) builds mmtune.ko without a compiler
#            warning, each mmtune symbol it uses is exported by this
#            configuration and it imports MMTUNE; a skip where the hooks
#            are off
# and for hooks-off, one point per object of the identity set (the
# touched objects, and the objects of their directories whose source
# includes a header the series touches):
#   stock    the object disassembles (objdump -dr, the file name line
#            dropped) as the one built from the unpatched tree with the
#            same config, plus only the row's stock_fixes (each justified
#            in the cover letter). Where line numbers differ (lockdep's
#            RCU checks pass __LINE__, and the series moves lines), both
#            are built again with __LINE__ fixed at 0 and must then be
#            identical. The unpatched tree is build/LINE/matrix/stock,
#            named as long as build/LINE/matrix/linux so that file name
#            strings keep their offsets.
# and for bisect, one point per patch and configuration (test, hooks-off):
#            with the series applied up to that patch, the touched objects
#            that exist and are built compile with W=1, without a warning.
#
# Only "make modules_prepare" and single objects are built, never vmlinux:
# one O= object directory per configuration under build/LINE/matrix, kept
# between runs (the unpatched tree and the bisect tree are hard-linked
# copies of the pristine tree, each file a patch writes copied first)
# (kbuild rebuilds what changed, ccache in $MMTUNE_CACHE/ccache makes the
# rest cheap). The patched tree is rebuilt when its inputs change (series,
# the row, its fragments, distro-config.sh, Debian's config, compiler,
# this script) or with --fresh. Compiles run under "nice -n 10" with -j2
# (MMTUNE_MATRIX_JOBS): the machine is shared. Logs: build/LINE/matrix/logs/.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}
kline=${1:-}
case "$kline" in
''|-*) echo "usage: $0 LINE [--fresh] [CONFIG...]" >&2; exit 2 ;;
esac
shift
distro_config=$repo/packaging/kernel/distro-config.sh
debian_cfg=/usr/src/linux-config-$kline/config.amd64_none_amd64.xz
work=$repo/build/$kline/matrix
tree=$work/linux
stock=$work/stock
bisect=$work/bisect
logs=$work/logs
jobs=${MMTUNE_MATRIX_JOBS:-2}

all_configs=(test hooks-off swap-off zswap-off thp-off smp-off debian bisect)
# What each configuration requests on top of its base, and its base.
declare -A want=([test]=MMTUNE_HOOKS=y [hooks-off]=MMTUNE_HOOKS=n
	[swap-off]=SWAP=n [zswap-off]=ZSWAP=n [thp-off]=TRANSPARENT_HUGEPAGE=n
	[smp-off]=SMP=n [debian]=MMTUNE_HOOKS=y [bisect]=-)

fresh=0 plan_only=0
configs=()
for a in "$@"; do
	case "$a" in
	--fresh) fresh=1 ;;
	--plan) plan_only=1 ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*)
		[ -n "${want[$a]:-}" ] || { echo "usage: $0 LINE [--fresh|--plan] [${all_configs[*]}]" >&2; exit 2; }
		configs+=("$a") ;;
	esac
done

log_name=build-matrix-$kline
cd "$repo" || exit 1
. scripts/kernel-lib.sh
kernel_line "$kline"
# The row's matrix keys: its configurations, and its patches that change
# the kernel also with CONFIG_MMTUNE_HOOKS=n (fixes that stand without
# mmtune, each justified in the cover letter): hooks-off is compared with
# the unpatched tree plus these; nothing else may differ.
read -ra stock_fixes <<<"${stock_fixes:-}"
if [ ${#configs[@]} -eq 0 ]; then
	read -ra configs <<<"${matrix_configs:-}"
	[ ${#configs[@]} -gt 0 ] || die "$line_conf: matrix_configs is not set"
	for a in "${configs[@]}"; do
		[ -n "${want[$a]:-}" ] || die "$line_conf: matrix_configs: no configuration '$a' (${all_configs[*]})"
	done
fi
. tests/lib/tap.sh

export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$work CCACHE_MAXSIZE=5G
# kmake OBJDIR ARGS...: make in the shared tree for one configuration.
# W=1 and KCFLAGS on every step of a configuration, so that no step's
# command line differs from the last one's and makes kbuild redo it.
# -Wno-error overrides CONFIG_WERROR (on in x86_64_defconfig): a warning
# fails the compile step anyway, and every object is still made, so the
# other warnings, the exports and the module are checked too.
# kmake_in SRC OBJDIR ARGS...: the same for the source tree SRC; with
# nolines=1 in the environment __LINE__ is 0 (GCC warns that it redefines
# it: those builds are only disassembled).
kmake_in() {
	local src=$1 obj=$2 kcflags=-Wno-error
	shift 2
	[ "${nolines:-0}" = 1 ] && kcflags="$kcflags -U__LINE__ -D__LINE__=0"
	nice -n 10 make -C "$src" O="$obj" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc" \
		W=1 KCFLAGS="$kcflags" "$@"
}
kmake() { kmake_in "$tree" "$@"; }

# secs_since T0: whole seconds since T0 (from $SECONDS).
secs_since() { echo "$((SECONDS - $1)) s"; }

# The series, read from the patches: each touched .c file as its object,
# each touched header, and each mmtune export as "SYMBOL FILE".
touched_objs=$(grep -h '^+++ b/.*\.c$' "$series_dir"/0*.patch | sed 's|^+++ b/||; s|\.c$|.o|' | sort -u)
touched_hdrs=$(grep -h '^+++ b/include/.*\.h$' "$series_dir"/0*.patch | sed 's|^+++ b/include/||' | sort -u)
mmtune_exports=$(awk '
	/^\+\+\+ b\// { file = substr($2, 3) }
	/^\+[ \t]*EXPORT_SYMBOL[A-Z_]*\([A-Za-z0-9_]+, *MMTUNE\)/ {
		s = $0; sub(/^[^(]*\(/, "", s); sub(/,.*/, "", s); print s, file
	}' "$series_dir"/0*.patch | sort -u)
n_exports=$(echo "$mmtune_exports" | grep -c .)

if [ -z "$touched_objs" ] || [ "$n_exports" -eq 0 ]; then
	die "found no touched .c file or no MMTUNE export in $series_dir: is the series there?"
fi
mapfile -t series_patches < <(awk '!/^#/ && NF { print $1 }' "$series_dir/series")
for p in "${stock_fixes[@]}"; do
	printf '%s\n' "${series_patches[@]}" | grep -qxF "$p" || die "stock_fixes: $p is not in $series_dir/series"
done
# Files a patch writes: "--- a/F" and "+++ b/F" (not /dev/null).
patch_files() { sed -n 's|^--- a/||p; s|^+++ b/||p' "$@" | sed 's/[[:space:]].*//' | sort -u; }

# The identity set: the touched objects, and the objects of the same
# directories whose source includes a touched header directly (read in the
# pristine tree: a file that only the series makes include one is touched).
mkdir -p "$logs" "$work/configs"
kernel_source
id_objs=$(
	echo "$touched_objs"
	for dir in $(echo "$touched_objs" | xargs -n1 dirname | sort -u); do
		for h in $touched_hdrs; do
			grep -l "^#include <$h>" "$pristine/$dir"/*.c 2>/dev/null
		done
	done | sed "s|^$pristine/||; s|\.c$|.o|"
)
id_objs=$(echo "$id_objs" | sort -u)

n_points=1
for name in "${configs[@]}"; do
	case "$name" in
	bisect) n_points=$((n_points + 2 * ${#series_patches[@]})) ;;
	hooks-off) n_points=$((n_points + 4 + $(echo "$id_objs" | wc -l))) ;;
	*) n_points=$((n_points + 4)) ;;
	esac
done
tap_header
tap_plan $n_points
tap_diag "line $kline: touched objects: $(echo "$touched_objs" | tr '\n' ' ')"
tap_diag "line $kline: mmtune exports: $(echo "$mmtune_exports" | cut -d' ' -f1 | tr '\n' ' ')"
tap_diag "line $kline: configurations: ${configs[*]}; identity set: $(echo "$id_objs" | tr '\n' ' ')"
[ $plan_only -eq 0 ] || exit 0

# --- The patched tree -------------------------------------------------
# kernel_prepare_tree (as the test kernel is made: quilt --fuzz=0, then
# the test config in the tree), Debian's config adapted in the same tree,
# both configs kept, then "make mrproper": an O= build needs a clean tree.
key_inputs=("$0" "${line_fragments[@]}" "$distro_config")
[ -r "$debian_cfg" ] && key_inputs+=("$debian_cfg")
key=$(kernel_inputs_key "matrix-$kline" "${key_inputs[@]}")
tree_ok=1
t0=$SECONDS
if [ $fresh -eq 0 ] && [ "$(cat "$tree/.matrix-key" 2>/dev/null)" = "$key" ]; then
	tap_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0 (tree of an earlier run, same inputs, key $key)"
else
	# Objects of an older tree could look newer than a file the new
	# tree has back in its pristine state (cp -a keeps mtimes): start
	# the object directories afresh; ccache keeps this cheap.
	rm -rf "$tree" "$stock" "$bisect" "$work"/o-* "$work"/mod-* "$work"/configs/*
	if (kernel_prepare_tree "$tree" "$logs" "${line_fragments[@]}") 2>"$logs/tree.log" &&
		cp "$tree/.config" "$work/configs/test.config"; then
		if [ -r "$debian_cfg" ]; then
			xzcat "$debian_cfg" >"$work/configs/debian.in" &&
				(cd "$tree" && "$distro_config" "$work/configs/debian.in") >"$logs/debian.distro-config.log" 2>&1 &&
				mv "$work/configs/debian.in" "$work/configs/debian.config"
		fi
		if (cd "$tree" && nice -n 10 make -s mrproper) >>"$logs/tree.log" 2>&1; then
			echo "$key" >"$tree/.matrix-key"
			tap_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0 ($(secs_since $t0))"
		else
			tree_ok=0
			tap_not_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0: make mrproper failed"
			tail -n 20 "$logs/tree.log" | tap_diag
		fi
	else
		tree_ok=0
		tap_not_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0"
		# From the patch that failed on (quilt names it and the hunk).
		awk '/^Applying patch/ { n = 0 } { l[n++] = $0 } END { for (i = 0; i < n; i++) print l[i] }' \
			"$logs/tree.log" | tail -n 30 | tap_diag
	fi
fi

# --- Helpers per configuration ---------------------------------------

# built_objs OBJDIR SRC OBJ...: those of OBJ... that this configuration
# builds from SRC, by asking kbuild's own Makefile of each directory
# (obj-y, obj-m, and the parts of composite objects such as
# page-alloc.o), with the configuration's auto.conf. Assumes the
# directory itself is built, which holds for mm/.
built_objs() {
	local obj=$1 src=$2 dir objs o
	shift 2
	for dir in $(printf '%s\n' "$@" | xargs -n1 dirname | sort -u); do
		objs=$(make -s --no-print-directory -f - srctree="$src" objtree="$obj" src="$dir" obj="$dir" <<-EOF 2>/dev/null
			include $obj/include/config/auto.conf
			include $src/$dir/\$(if \$(wildcard $src/$dir/Kbuild),Kbuild,Makefile)
			expand = \$(foreach m,\$(1),\$(if \$(strip \$(\$(m:.o=-objs)) \$(\$(m:.o=-y))),\$(\$(m:.o=-objs)) \$(\$(m:.o=-y)),\$(m)))
			\$(info \$(sort \$(call expand,\$(obj-y) \$(obj-m))))
			all: ;
		EOF
		) || return 1
		for o in $(printf '%s\n' "$@" | grep "^$dir/"); do
			case " $objs " in *" ${o#"$dir"/} "*) echo "$o" ;; esac
		done
	done
}

# ksym_table OBJ...: one line per export in the objects:
# "SYMBOL NAMESPACE(or -) gpl|plain OBJECT", what modpost reads to write
# Module.symvers. Up to 6.4 EXPORT_SYMBOL*() makes a __ksymtab_SYM in
# section ___ksymtab[_gpl]+SYM and a string __kstrtabns_SYM (the
# namespace) in __ksymtab_strings; from 6.5 on a __export_symbol_SYM in
# section .export_symbol: the license ("GPL" or "") and the namespace as
# strings. An object has one kind or the other: both are read.
ksym_table() {
	python3 - "$@" <<-'EOF'
		import subprocess, sys, tempfile
		def run(*a):
		    return subprocess.run(a, capture_output=True).stdout
		def section(o, name):
		    with tempfile.NamedTemporaryFile() as t:
		        run("objcopy", "-O", "binary", "--only-section=" + name, o, t.name)
		        return open(t.name, "rb").read()
		def cstr(data, off):
		    return data[off:].split(b"\0")[0].decode()
		for o in sys.argv[1:]:
		    syms = [l.split() for l in run("objdump", "-t", o).decode().splitlines()]
		    syms = [f for f in syms if len(f) > 2]
		    exp, strs = section(o, ".export_symbol"), section(o, "__ksymtab_strings")
		    ns = {f[-1][12:]: int(f[0], 16) for f in syms if f[-1].startswith("__kstrtabns_")}
		    for f in syms:
		        name = f[-1]
		        if name.startswith("__export_symbol_"):
		            off = int(f[0], 16)
		            lic, n = exp[off:].split(b"\0")[:2]
		            print(name[16:], n.decode() or "-", "gpl" if lic == b"GPL" else "plain", o)
		        elif name.startswith("__ksymtab_") and f[-3].startswith("___ksymtab"):
		            sym = name[10:]
		            n = cstr(strs, ns[sym]) if sym in ns else ""
		            print(sym, n or "-", "gpl" if f[-3].startswith("___ksymtab_gpl+") else "plain", o)
	EOF
}

# compile_objs SRC OBJDIR LOG FRESH: make the touched objects that
# OBJDIR's configuration builds from SRC (W=1), afresh if FRESH is 1, else
# those kbuild finds out of date. Sets objs/objv (the objects), cc_rc
# (make's exit status), cc_warn (warning and error lines of LOG) and
# cc_missing (objects not made); returns 1 if the objects cannot be told.
compile_objs() {
	local src=$1 obj=$2 log=$3 fresh=$4 o
	objs="" objv=() cc_rc=0 cc_warn="" cc_missing=""
	# shellcheck disable=SC2086 # one object per word
	objs=$(built_objs "$obj" "$src" $touched_objs) && [ -n "$objs" ] || return 1
	mapfile -t objv <<<"$objs"
	[ "$fresh" = 1 ] && (cd "$obj" && rm -f "${objv[@]}")
	kmake_in "$src" "$obj" -k "${objv[@]}" >"$log" 2>&1
	cc_rc=$?
	cc_warn=$(grep -E -i 'warning|error' "$log")
	for o in $objs; do [ -f "$obj/$o" ] || cc_missing="$cc_missing $o"; done
	return 0
}

# copy_pristine DEST FILE...: DEST as a hard-linked copy of the pristine
# tree (seconds, no space), each FILE (a path in it) a copy of its own
# first, so that what patch and quilt write never reaches the pristine
# tree through a link. kbuild's O= builds write nothing into DEST.
copy_pristine() {
	local dest=$1 f
	shift
	rm -rf "$dest" && cp -al "$pristine" "$dest" && rm -f "$dest/.complete" || return 1
	for f in "$@"; do
		[ ! -f "$pristine/$f" ] || cp --remove-destination "$pristine/$f" "$dest/$f" || return 1
	done
}

# disasm OBJ: objdump -dr without the line that names the file.
disasm() { objdump -dr "$1" | tail -n +3; }

# --- The matrix -------------------------------------------------------
hooks_off_objs=""
for name in "${configs[@]}"; do
	[ "$name" = bisect ] && continue
	obj=$work/o-$name
	sym=${want[$name]%=*} val=${want[$name]#*=}
	hooks=y
	[ "$name" = hooks-off ] && hooks=n
	base="test"
	[ "$name" = debian ] && base=debian
	if [ $tree_ok -eq 0 ]; then
		for step in config compile exports module; do tap_skip "$kline $name: $step" "the series does not apply"; done
		continue
	fi

	# config: the requested symbol, and the hooks, survive olddefconfig.
	t0=$SECONDS
	mkdir -p "$obj"
	step_ok=0
	what="CONFIG_$sym=$val"
	[ "$sym" != MMTUNE_HOOKS ] && what="$what, CONFIG_MMTUNE_HOOKS=$hooks"
	if [ ! -f "$work/configs/$base.config" ]; then
		tap_not_ok "$kline $name: olddefconfig keeps $what"
		if [ "$base" = debian ]; then
			if [ -r "$debian_cfg" ]; then
				tail -n 20 "$logs/debian.distro-config.log" | tap_diag
			else
				tap_diag "$debian_cfg missing (apt-get install linux-config-$kline, or scripts/setup-host.sh)"
			fi
		fi
	else
		cp "$work/configs/$base.config" "$obj/.config"
		if [ "$val" = n ]; then
			"$tree/scripts/config" --file "$obj/.config" --disable "$sym"
		else
			"$tree/scripts/config" --file "$obj/.config" --enable "$sym"
		fi
		lost=""
		if ! kmake "$obj" olddefconfig >"$logs/$name.config.log" 2>&1; then
			lost="make olddefconfig failed: $(tail -n 5 "$logs/$name.config.log")"
		else
			for sv in "$sym=$val" "MMTUNE_HOOKS=$hooks"; do
				if [ "${sv#*=}" = y ]; then
					grep -qx "CONFIG_${sv%=*}=y" "$obj/.config" || lost="$lost CONFIG_$sv"
				else
					grep -qE "^CONFIG_${sv%=*}=[ym]" "$obj/.config" && lost="$lost CONFIG_$sv"
				fi
			done
		fi
		if [ -z "$lost" ]; then
			step_ok=1
			tap_ok "$kline $name: olddefconfig keeps $what ($(secs_since $t0))"
		else
			tap_not_ok "$kline $name: olddefconfig keeps $what"
			tap_diag "Kconfig dropped:$lost (something selects or depends; see $obj/.config)"
		fi
	fi
	if [ $step_ok -eq 0 ]; then
		for step in compile exports module; do tap_skip "$kline $name: $step" "the config step failed"; done
		continue
	fi

	# compile: modules_prepare, then the touched objects built here.
	# A warning fails this step only: exports and module still run
	# when every object was made.
	t0=$SECONDS
	step_ok=0
	objs=""
	if ! kmake "$obj" modules_prepare >"$logs/$name.prepare.log" 2>&1; then
		tap_not_ok "$kline $name: W=1 compile of the touched objects: make modules_prepare failed"
		grep -E 'error|Error' "$logs/$name.prepare.log" | head -n 20 | tap_diag
	elif ! compile_objs "$tree" "$obj" "$logs/$name.compile.log" 1; then
		tap_not_ok "$kline $name: W=1 compile of the touched objects: cannot tell which are built"
	else
		desc="$kline $name: W=1 compile of the $(echo "$objs" | wc -w) touched objects built here, no warning"
		[ $cc_rc -eq 0 ] && [ -z "$cc_missing" ] && step_ok=1
		if [ $step_ok -eq 1 ] && [ -z "$cc_warn" ]; then
			tap_ok "$desc ($(secs_since $t0))"
		else
			tap_not_ok "$desc"
			[ $cc_rc -eq 0 ] || tap_diag "make exited $cc_rc (log: $logs/$name.compile.log)"
			[ -z "$cc_missing" ] || tap_diag "not made:$cc_missing"
			grep -E -i -A4 'warning|error' "$logs/$name.compile.log" | head -n 60 | tap_diag
		fi
		notbuilt=$(echo "$touched_objs" | grep -vxF -f <(echo "$objs") | tr '\n' ' ')
		[ -z "$notbuilt" ] || tap_diag "$name: not built in this configuration (not compiled): $notbuilt"
		[ $step_ok -eq 1 ] && [ "$name" = hooks-off ] && hooks_off_objs=$objs
	fi
	if [ $step_ok -eq 0 ]; then
		for step in exports module; do tap_skip "$kline $name: $step" "the objects were not made"; done
		continue
	fi

	# exports: what Module.symvers would list for these objects. modpost
	# writes Module.symvers from the __ksymtab_*/__kstrtabns_* entries of
	# vmlinux.o, which is "ld -r" of these same objects: a symbol that no
	# object defines cannot be there. Linking vmlinux per configuration
	# would take hours; reading the objects takes a second.
	table=$(cd "$obj" && ksym_table "${objv[@]}")
	echo "$table" >"$logs/$name.exports"
	n_all=$(echo "$table" | grep -c .)
	bad=""
	found=0
	expect=0
	absent=""
	while read -r s file; do
		row=$(echo "$table" | awk -v s="$s" '$1 == s')
		if [ "$hooks" = n ]; then
			[ -z "$row" ] || bad="$bad $s (in ${row##* })"
		elif echo "$objs" | grep -qx "${file%.c}.o"; then
			expect=$((expect + 1))
			case "$row" in
			"$s MMTUNE gpl "*) found=$((found + 1)) ;;
			'') bad="$bad $s (missing from ${file%.c}.o)" ;;
			*) bad="$bad $s (not GPL-only in namespace MMTUNE: ${row% *})" ;;
			esac
		else
			absent="$absent $s"
		fi
	done <<<"$mmtune_exports"
	# Any other export put in MMTUNE by a later patch is an mmtune export too.
	if [ "$hooks" = n ]; then
		other=$(echo "$table" | awk '$2 == "MMTUNE" { print $1 }' |
			grep -vxF -f <(echo "$mmtune_exports" | cut -d' ' -f1) | tr '\n' ' ')
		[ -z "$other" ] || bad="$bad namespace MMTUNE: $other"
	fi
	if [ "$hooks" = n ]; then
		desc="$kline $name: none of the $n_exports mmtune exports in the objects ($n_all exports there)"
	else
		desc="$kline $name: the $expect mmtune exports of the objects built here are there, GPL-only, namespace MMTUNE"
	fi
	if [ -z "$bad" ] && { [ "$hooks" = n ] || [ $found -gt 0 ]; }; then
		tap_ok "$desc"
	else
		tap_not_ok "$desc"
		[ -z "$bad" ] || tap_diag "wrong:$bad"
		[ $found -gt 0 ] || [ "$hooks" = n ] || tap_diag "no mmtune export found: the check would pass vacuously"
	fi
	[ -z "$absent" ] || tap_diag "$name: exported from objects not built here:$absent"

	# module: make M= in a copy (its objects stay out of module/).
	if [ "$hooks" = n ]; then
		tap_skip "$kline $name: make M=module" "CONFIG_MMTUNE_HOOKS=n: mmtune.ko needs the hook API; dkms.conf's BUILD_EXCLUSIVE_CONFIG skips such kernels"
		continue
	fi
	t0=$SECONDS
	mod=$work/mod-$name
	rm -rf "$mod"
	mkdir -p "$mod"
	cp "$repo"/module/Kbuild "$repo"/module/*.[ch] "$mod"/
	rm -f "$mod"/*.mod.c
	kmake "$obj" M="$mod" KBUILD_MODPOST_WARN=1 modules >"$logs/$name.module.log" 2>&1
	rc=$?
	# Without vmlinux there is no Module.symvers: modpost says so and
	# cannot resolve the kernel's symbols; BTF needs vmlinux too. Those
	# lines are expected; any other warning or error is not.
	warn=$(grep -v -E '^WARNING: Module\.symvers is missing\.|^ +(Modules may not have dependencies|You may get many unresolved|You can set KBUILD_MODPOST_WARN|if you want to proceed)|^WARNING: modpost: "[A-Za-z0-9_.]+" \[.*\] undefined!$|^WARNING: modpost: suppressed [0-9]+ unresolved symbol warnings|^Skipping BTF generation' \
		"$logs/$name.module.log" | grep -E -i 'warning|error')
	bad="" uses=0
	if [ -f "$mod/mmtune.ko" ]; then
		for s in $(nm -u "$mod/mmtune.ko" | awk '{ print $2 }' | grep -xF -f <(echo "$mmtune_exports" | cut -d' ' -f1)); do
			echo "$table" | awk -v s="$s" '$1 == s && $2 == "MMTUNE" { f = 1 } END { exit !f }' ||
				bad="$bad $s"
		done
		uses=$(nm -u "$mod/mmtune.ko" | awk '{ print $2 }' | grep -cxF -f <(echo "$mmtune_exports" | cut -d' ' -f1))
		modinfo -F import_ns "$mod/mmtune.ko" | grep -qx MMTUNE || bad="$bad (no MODULE_IMPORT_NS(MMTUNE))"
	fi
	desc="$kline $name: make M=module (W=1) builds mmtune.ko, no compiler warning, its mmtune imports exported here"
	if [ $rc -eq 0 ] && [ -f "$mod/mmtune.ko" ] && [ -z "$warn" ] && [ -z "$bad" ]; then
		feats=""
		for f in swap_slots thp_swap split_zero zswap_large pcp_high; do
			[ ! -f "$mod/$f.o" ] || feats="$feats$f "
		done
		tap_ok "$desc ($uses imports; features built: ${feats% }; $(secs_since $t0))"
	else
		tap_not_ok "$desc"
		[ $rc -eq 0 ] || tap_diag "make exited $rc (log: $logs/$name.module.log)"
		[ -z "$bad" ] || tap_diag "used by mmtune.ko but not exported in namespace MMTUNE here:$bad"
		[ -z "$warn" ] || echo "$warn" | head -n 40 | tap_diag
	fi
done

# --- hooks-off against the unpatched tree -----------------------------
# One point per object of the identity set: its disassembly with
# relocations is the unpatched tree's (plus stock_fixes) with the same
# config, or differs only in __LINE__ constants. The untouched objects of
# the set are compiled here too; their warnings are not the series'.
stock_compare() {
	local sobj=$work/o-stock pobj=$work/o-hooks-off l0=0 o f p fixed n t0=$SECONDS
	local stock_objs p_objs cfgdiff fix_files=""
	local -A fix_of=()
	for p in "${stock_fixes[@]}"; do
		for f in $(patch_files "$series_dir/$p"); do fix_of[$f]="${fix_of[$f]:+${fix_of[$f]}, }${p%%-*}"; done
	done
	fail_all() {
		for o in $id_objs; do tap_not_ok "$kline hooks-off: $o disassembles as stock: $1"; done
		[ -z "${2:-}" ] || tail -n 20 "$2" | tap_diag
	}
	if [ -z "$hooks_off_objs" ]; then
		for o in $id_objs; do tap_skip "$kline hooks-off: $o disassembles as stock" "hooks-off did not compile"; done
		return
	fi
	# shellcheck disable=SC2086 # one object per word
	if ! p_objs=$(built_objs "$pobj" "$tree" $id_objs); then
		fail_all "cannot tell which objects hooks-off builds"
		return
	fi
	mapfile -t objv < <(echo "$p_objs" | grep -vxF -f <(echo "$hooks_off_objs"))
	[ ${#objv[@]} -eq 0 ] || kmake "$pobj" -k "${objv[@]}" >"$logs/hooks-off.identity.log" 2>&1
	# The unpatched tree plus stock_fixes, kept while the series is.
	if [ "$(cat "$stock/.matrix-key" 2>/dev/null)" != "$key" ]; then
		rm -rf "$sobj" "$work"/o-stock-l0 "$work"/o-hooks-off-l0
		[ ${#stock_fixes[@]} -eq 0 ] || fix_files=$(cd "$series_dir" && patch_files "${stock_fixes[@]}")
		# shellcheck disable=SC2086 # one path per word
		if ! (copy_pristine "$stock" $fix_files &&
			for p in "${stock_fixes[@]}"; do
				patch -d "$stock" -p1 --fuzz=0 -s --no-backup-if-mismatch <"$series_dir/$p" || exit 1
			done) >"$logs/stock.log" 2>&1; then
			fail_all "the unpatched tree plus ${stock_fixes[*]} cannot be made" "$logs/stock.log"
			return
		fi
		echo "$key" >"$stock/.matrix-key"
	fi
	# The same config: hooks-off's, without the series' own symbols,
	# which the unpatched Kconfig does not know.
	mkdir -p "$sobj"
	grep -v 'CONFIG_MMTUNE_' "$pobj/.config" >"$sobj/.config"
	if ! kmake_in "$stock" "$sobj" olddefconfig >"$logs/stock.config.log" 2>&1; then
		fail_all "make olddefconfig failed in the unpatched tree" "$logs/stock.config.log"
		return
	fi
	cfgdiff=$(diff <(grep -v 'CONFIG_MMTUNE_' "$pobj/.config") "$sobj/.config")
	if [ -n "$cfgdiff" ]; then
		fail_all "the unpatched tree's config differs from hooks-off's"
		echo "$cfgdiff" | head -n 20 | tap_diag
		return
	fi
	# shellcheck disable=SC2086 # one object per word
	if ! kmake_in "$stock" "$sobj" modules_prepare >"$logs/stock.prepare.log" 2>&1 ||
		! stock_objs=$(built_objs "$sobj" "$stock" $id_objs); then
		fail_all "make modules_prepare failed in the unpatched tree" "$logs/stock.prepare.log"
		return
	fi
	if [ -n "$stock_objs" ]; then
		mapfile -t objv <<<"$stock_objs"
		kmake_in "$stock" "$sobj" -k "${objv[@]}" >"$logs/stock.compile.log" 2>&1
	fi
	tap_diag "$kline hooks-off: the unpatched tree${stock_fixes:+ plus ${stock_fixes[*]%%-*}} prepared and compiled ($(secs_since $t0))"
	for o in $id_objs; do
		fixed=""
		[ -z "${fix_of[${o%.o}.c]:-}" ] || fixed=" plus ${fix_of[${o%.o}.c]} (listed fix)"
		local in_p=0 in_s=0
		echo "$p_objs" | grep -qxF "$o" && in_p=1
		echo "$stock_objs" | grep -qxF "$o" && in_s=1
		if [ $in_p = 0 ] && [ $in_s = 0 ]; then
			tap_ok "$kline hooks-off: $o is built neither here nor in stock"
			continue
		elif [ $in_p != $in_s ]; then
			tap_not_ok "$kline hooks-off: $o disassembles as stock: built $([ $in_p = 1 ] && echo "with the series only" || echo "in stock only")"
			continue
		elif [ ! -f "$sobj/$o" ]; then
			tap_not_ok "$kline hooks-off: $o disassembles as stock: the unpatched tree did not compile it"
			grep -E -i -A4 'error' "$logs/stock.compile.log" | head -n 20 | tap_diag
			continue
		fi
		if cmp -s <(disasm "$pobj/$o") <(disasm "$sobj/$o"); then
			tap_ok "$kline hooks-off: $o disassembles as stock$fixed (objdump -dr identical)"
			continue
		fi
		n=$(diff <(disasm "$pobj/$o") <(disasm "$sobj/$o") | grep -c '^[<>]')
		# Again with __LINE__ fixed, in object directories of their own.
		if [ $l0 = 0 ]; then
			l0=1
			for d in o-stock-l0:"$stock":"$sobj" o-hooks-off-l0:"$tree":"$pobj"; do
				IFS=: read -r dir src cfg <<<"$d"
				mkdir -p "$work/$dir"
				cp "$cfg/.config" "$work/$dir/.config"
				nolines=1 kmake_in "$src" "$work/$dir" olddefconfig >"$logs/$dir.prepare.log" 2>&1 &&
					nolines=1 kmake_in "$src" "$work/$dir" modules_prepare >>"$logs/$dir.prepare.log" 2>&1 || l0=2
			done
		fi
		if [ $l0 = 2 ]; then
			tap_not_ok "$kline hooks-off: $o disassembles as stock$fixed: $n lines differ; cannot prepare the __LINE__=0 builds"
			continue
		fi
		rm -f "$work/o-stock-l0/$o" "$work/o-hooks-off-l0/$o"
		nolines=1 kmake_in "$stock" "$work/o-stock-l0" "$o" >"$logs/stock-l0.compile.log" 2>&1
		nolines=1 kmake_in "$tree" "$work/o-hooks-off-l0" "$o" >"$logs/hooks-off-l0.compile.log" 2>&1
		if [ -f "$work/o-stock-l0/$o" ] && [ -f "$work/o-hooks-off-l0/$o" ] &&
			cmp -s <(disasm "$work/o-hooks-off-l0/$o") <(disasm "$work/o-stock-l0/$o"); then
			tap_ok "$kline hooks-off: $o disassembles as stock$fixed (objdump -dr identical with __LINE__ fixed; $n lines differ in line numbers only)"
		else
			tap_not_ok "$kline hooks-off: $o disassembles as stock$fixed"
			tap_diag "$n lines of objdump -dr differ, also with __LINE__ fixed (< with the series, > stock):"
			diff <(disasm "$work/o-hooks-off-l0/$o" 2>&1) <(disasm "$work/o-stock-l0/$o" 2>&1) | head -n 40 | tap_diag
		fi
	done
}

# --- The series patch by patch -----------------------------------------
# A tree of its own, patched one patch at a time with quilt (--fuzz=0);
# after each, test and hooks-off compile the touched objects that exist
# and are built (those kbuild finds out of date: what the patch changed,
# or a header it changed reaches; each one is compiled after the first
# patch, so every warning is seen where it appears).
bisect_run() {
	local i=0 p c o t0 ok applied=1 what lost desc
	local series_files
	series_files=$(cd "$series_dir" && patch_files "${series_patches[@]}")
	# shellcheck disable=SC2086 # one path per word
	if [ $tree_ok -eq 0 ] || ! copy_pristine "$bisect" $series_files >"$logs/bisect.log" 2>&1; then
		for p in "${series_patches[@]}"; do
			for c in test hooks-off; do tap_not_ok "$kline bisect: ${p%%-*} ($c): no tree to patch (see $logs/bisect.log)"; done
		done
		return
	fi
	for p in "${series_patches[@]}"; do
		i=$((i + 1))
		if [ $applied = 1 ] && ! (cd "$bisect" && QUILT_PATCHES="$series_dir" QUILT_PC=.pc \
			quilt --quiltrc=- push --fuzz=0) >>"$logs/bisect.log" 2>&1; then
			applied=0
			tail -n 20 "$logs/bisect.log" | tap_diag
		fi
		for c in test hooks-off; do
			t0=$SECONDS
			o=$work/o-bisect-$c
			if [ $applied = 0 ]; then
				tap_not_ok "$kline bisect: ${p%%-*} ($c): the series does not apply up to $p"
				continue
			fi
			mkdir -p "$o"
			cp "$work/configs/test.config" "$o/.config"
			what=enable
			[ $c = hooks-off ] && what=disable
			"$bisect/scripts/config" --file "$o/.config" --$what MMTUNE_HOOKS
			ok=1
			if ! kmake_in "$bisect" "$o" olddefconfig >"$logs/bisect-$i-$c.log" 2>&1 ||
				! kmake_in "$bisect" "$o" modules_prepare >>"$logs/bisect-$i-$c.log" 2>&1; then
				tap_not_ok "$kline bisect: ${p%%-*} ($c): make olddefconfig or modules_prepare failed"
				grep -E 'error|Error' "$logs/bisect-$i-$c.log" | head -n 20 | tap_diag
				continue
			fi
			# Once the series has the symbol, the config must keep it.
			lost=""
			if grep -q '^config MMTUNE_HOOKS$' "$bisect/mm/Kconfig"; then
				if grep -qx 'CONFIG_MMTUNE_HOOKS=y' "$o/.config"; then
					[ $c = test ] || lost="CONFIG_MMTUNE_HOOKS=y, wanted off"
				else
					[ $c = hooks-off ] || lost="CONFIG_MMTUNE_HOOKS off, wanted y"
				fi
			fi
			[ -z "$lost" ] || ok=0
			if ! compile_objs "$bisect" "$o" "$logs/bisect-$i-$c.compile.log" 0; then
				tap_not_ok "$kline bisect: ${p%%-*} ($c): cannot tell which touched objects are built"
				continue
			fi
			[ $cc_rc -eq 0 ] && [ -z "$cc_missing" ] && [ -z "$cc_warn" ] || ok=0
			desc="$kline bisect: ${p%%-*} ($c): W=1 compile of the $(echo "$objs" | wc -w) touched objects built there, no warning"
			if [ $ok = 1 ]; then
				tap_ok "$desc ($(secs_since $t0))"
			else
				tap_not_ok "$desc"
				[ -z "$lost" ] || tap_diag "olddefconfig gave $lost"
				[ $cc_rc -eq 0 ] || tap_diag "make exited $cc_rc (log: $logs/bisect-$i-$c.compile.log)"
				[ -z "$cc_missing" ] || tap_diag "not made:$cc_missing"
				grep -E -i -A4 'warning|error' "$logs/bisect-$i-$c.compile.log" | head -n 40 | tap_diag
			fi
		done
	done
}

for name in "${configs[@]}"; do
	case "$name" in
	hooks-off) stock_compare ;;
	bisect) bisect_run ;;
	esac
done

[ "$tap_failed" -eq 0 ]

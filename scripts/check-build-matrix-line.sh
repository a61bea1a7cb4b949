#!/bin/bash
# Build matrix of another kernel line as TAP: its patch series and the
# module under the configurations a distribution or a user may choose,
# without building a kernel, and the objects with the hooks off against
# the unpatched tree's. scripts/check-build-matrix.sh does 6.1; make
# check-matrix runs both.
#
#   scripts/check-build-matrix-line.sh LINE [--fresh] [CONFIG...]
#
# LINE: a directory of kernel-patches/ with a series (6.12), built on
# Debian's linux-source-LINE (and, for "debian", linux-config-LINE).
# CONFIG (default: all, in this order):
#   test       the test kernel's config (scripts/kernel-lib.sh:
#              x86_64_defconfig + kvm_guest.config + the fragments of
#              the line's row, kernel-patches/LINE/line.conf)
#   hooks-off  test + CONFIG_MMTUNE_HOOKS=n
#   swap-off   test + CONFIG_SWAP=n
#   zswap-off  test + CONFIG_ZSWAP=n
#   thp-off    test + CONFIG_TRANSPARENT_HUGEPAGE=n
#   debian     Debian's generic amd64 config (linux-config-LINE) adapted by
#              packaging/kernel/distro-config.sh (hooks on)
#
# Test points: the series applies (one patched tree for every
# configuration, beside an unpatched copy of the same source), then per
# configuration
#   config    "make olddefconfig" kept the requested setting
#   compile   the objects the series touches (its "+++ b/*.c" files, those
#             this configuration builds) compile with W=1, no warning
#   exports   with the hooks off no mmtune export (EXPORT_SYMBOL*(sym,
#             MMTUNE) in the patches) is in those objects; with them on
#             each one whose object is built is there, GPL-only, in
#             namespace MMTUNE (6.12 keeps them in .export_symbol)
#   module    "make M=module" (W=1) builds mmtune.ko without a compiler
#             warning, each mmtune symbol it uses is exported here and it
#             imports MMTUNE; a skip where the hooks are off
# and for hooks-off one more:
#   identity  objdump -dr of every touched object, and of the objects of
#             those directories whose source includes a header the series
#             touches (built here too), is the unpatched tree's, built with
#             the same config and flags ("stock": the patched and unpatched trees are
#             build/matrix-LINE/linux and .../stock, same path length, so
#             that __FILE__ strings move nothing)
#
# Only "make modules_prepare" and single objects are built, never vmlinux;
# one O= directory per configuration under build/matrix-LINE, kept between
# runs. The trees are remade when their inputs change or with --fresh.
# Compiles run under "nice -n 10" with -j2 (MMTUNE_MATRIX_JOBS) and ccache.
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
work=$repo/build/matrix-$kline
tree=$work/linux
stock=$work/stock
logs=$work/logs
jobs=${MMTUNE_MATRIX_JOBS:-2}

all_configs=(test hooks-off swap-off zswap-off thp-off debian)
declare -A want=([test]=MMTUNE_HOOKS=y [hooks-off]=MMTUNE_HOOKS=n
	[swap-off]=SWAP=n [zswap-off]=ZSWAP=n [thp-off]=TRANSPARENT_HUGEPAGE=n
	[debian]=MMTUNE_HOOKS=y)

fresh=0
configs=()
for a in "$@"; do
	case "$a" in
	--fresh) fresh=1 ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*)
		[ -n "${want[$a]:-}" ] || { echo "usage: $0 LINE [--fresh] [${all_configs[*]}]" >&2; exit 2; }
		configs+=("$a") ;;
	esac
done
[ ${#configs[@]} -gt 0 ] || configs=("${all_configs[@]}")

log_name=build-matrix-$kline
cd "$repo" || exit 1
. scripts/kernel-lib.sh
kernel_line "$kline"
fragments=("${line_fragments[@]}")
. tests/lib/tap.sh

export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$work CCACHE_MAXSIZE=5G
# kmake SRC OBJDIR ARGS...: make for one configuration, W=1 and KCFLAGS on
# every step so that kbuild never redoes one for a changed command line.
kmake() {
	local src=$1 obj=$2
	shift 2
	nice -n 10 make -C "$src" O="$obj" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc" \
		W=1 KCFLAGS=-Wno-error "$@"
}

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
[ -n "$touched_objs" ] && [ "$n_exports" -gt 0 ] ||
	die "found no touched .c file or no MMTUNE export in $series_dir: is the series there?"

n_configs=${#configs[@]}
has_hooks_off=0
for c in "${configs[@]}"; do [ "$c" = hooks-off ] && has_hooks_off=1; done
tap_header
tap_plan $((1 + 4 * n_configs + has_hooks_off))
tap_diag "line $kline: touched objects: $(echo "$touched_objs" | tr '\n' ' ')"
tap_diag "line $kline: mmtune exports: $(echo "$mmtune_exports" | cut -d' ' -f1 | tr '\n' ' ')"

# --- The trees ---------------------------------------------------------
# The patched tree as the test kernel's (kernel_prepare_tree: quilt
# --fuzz=0, the test config), Debian's config adapted in it, then "make
# mrproper" (O= builds need a clean tree); the unpatched one a hard-linked
# copy of the pristine source, which O= builds never write.
mkdir -p "$logs" "$work/configs"
kernel_source
key_inputs=("$0" "${fragments[@]}" "$distro_config")
[ -r "$debian_cfg" ] && key_inputs+=("$debian_cfg")
key=$(kernel_inputs_key "matrix-$kline" "${key_inputs[@]}")
tree_ok=1
t0=$SECONDS
if [ $fresh -eq 0 ] && [ "$(cat "$tree/.matrix-key" 2>/dev/null)" = "$key" ] && [ -f "$stock/.matrix-stock" ]; then
	tap_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0 (trees of an earlier run, same inputs, key $key)"
else
	rm -rf "$tree" "$stock" "$work"/o-* "$work"/mod-* "$work"/configs/*
	if (kernel_prepare_tree "$tree" "$logs" "${fragments[@]}") 2>"$logs/tree.log" &&
		cp "$tree/.config" "$work/configs/test.config"; then
		if [ -r "$debian_cfg" ]; then
			xzcat "$debian_cfg" >"$work/configs/debian.in" &&
				(cd "$tree" && "$distro_config" "$work/configs/debian.in") >"$logs/debian.distro-config.log" 2>&1 &&
				mv "$work/configs/debian.in" "$work/configs/debian.config"
		fi
		if (cd "$tree" && nice -n 10 make -s mrproper) >>"$logs/tree.log" 2>&1 &&
			cp -al "$pristine" "$stock" && rm -f "$stock/.complete" && touch "$stock/.matrix-stock"; then
			echo "$key" >"$tree/.matrix-key"
			tap_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0 ($(secs_since $t0))"
		else
			tree_ok=0
			tap_not_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0: make mrproper or the unpatched copy failed"
			tail -n 20 "$logs/tree.log" | tap_diag
		fi
	else
		tree_ok=0
		tap_not_ok "$kline series applies to $src_pkg $pkgver with quilt --fuzz=0"
		awk '/^Applying patch/ { n = 0 } { l[n++] = $0 } END { for (i = 0; i < n; i++) print l[i] }' \
			"$logs/tree.log" | tail -n 30 | tap_diag
	fi
fi

# --- Helpers -------------------------------------------------------------

# built_objs OBJDIR OBJ...: those of OBJ... that this configuration builds,
# by asking kbuild's own Makefile of each directory with its auto.conf.
built_objs() {
	local obj=$1 dir objs o
	shift
	for dir in $(printf '%s\n' "$@" | xargs -n1 dirname | sort -u); do
		objs=$(make -s --no-print-directory -f - srctree="$tree" objtree="$obj" src="$dir" obj="$dir" <<-EOF 2>/dev/null
			include $obj/include/config/auto.conf
			include $tree/$dir/\$(if \$(wildcard $tree/$dir/Kbuild),Kbuild,Makefile)
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

# The identity set: the touched objects, and the objects of the same
# directories whose source includes a touched header directly.
identity_objs() {
	local dir h
	{
		echo "$touched_objs"
		for dir in $(echo "$touched_objs" | xargs -n1 dirname | sort -u); do
			for h in $touched_hdrs; do
				grep -l "^#include <$h>" "$tree/$dir"/*.c 2>/dev/null
			done
		done | sed "s|^$tree/||; s|\.c$|.o|"
	} | sort -u
}

# ksym_table OBJ...: "SYMBOL NAMESPACE(or -) gpl|plain OBJECT" per export.
# From 6.5 on EXPORT_SYMBOL*() emits __export_symbol_SYM in section
# .export_symbol: the license ("GPL" or "") and the namespace as strings,
# then the address; modpost reads them to write Module.symvers.
ksym_table() {
	python3 - "$@" <<-'EOF'
		import os, subprocess, sys, tempfile
		for o in sys.argv[1:]:
		    with tempfile.NamedTemporaryFile() as t:
		        if subprocess.run(["objcopy", "-O", "binary", "--only-section=.export_symbol",
		                           o, t.name], capture_output=True).returncode:
		            continue
		        data = open(t.name, "rb").read()
		    for l in subprocess.run(["objdump", "-t", o], capture_output=True,
		                            text=True).stdout.splitlines():
		        f = l.split()
		        if len(f) < 2 or not f[-1].startswith("__export_symbol_"):
		            continue
		        off = int(f[0], 16)
		        lic, ns = data[off:].split(b"\0")[:2]
		        print(f[-1][len("__export_symbol_"):], ns.decode() or "-",
		              "gpl" if lic == b"GPL" else "plain", o)
	EOF
}

# --- The matrix ----------------------------------------------------------
for name in "${configs[@]}"; do
	obj=$work/o-$name
	sym=${want[$name]%=*} val=${want[$name]#*=}
	hooks=y
	[ "$name" = hooks-off ] && hooks=n
	base=test
	[ "$name" = debian ] && base=debian
	steps=(config compile exports module)
	[ "$name" = hooks-off ] && steps+=(identity)
	if [ $tree_ok -eq 0 ]; then
		for step in "${steps[@]}"; do tap_skip "$kline $name: $step" "the series does not apply"; done
		continue
	fi

	# config
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
				tap_diag "$debian_cfg missing (apt-get install linux-config-$kline)"
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
		if ! kmake "$tree" "$obj" olddefconfig >"$logs/$name.config.log" 2>&1; then
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
			tap_diag "Kconfig dropped:$lost (see $obj/.config)"
		fi
	fi
	if [ $step_ok -eq 0 ]; then
		for step in "${steps[@]:1}"; do tap_skip "$kline $name: $step" "the config step failed"; done
		continue
	fi

	# compile: modules_prepare, then the touched objects built here.
	t0=$SECONDS
	step_ok=0
	objs=""
	want_objs=$touched_objs
	if ! kmake "$tree" "$obj" modules_prepare >"$logs/$name.prepare.log" 2>&1; then
		tap_not_ok "$kline $name: W=1 compile of the touched objects: make modules_prepare failed"
		grep -E 'error|Error' "$logs/$name.prepare.log" | head -n 20 | tap_diag
	elif ! objs=$(built_objs "$obj" $want_objs) || [ -z "$objs" ]; then
		tap_not_ok "$kline $name: W=1 compile of the touched objects: cannot tell which are built"
	else
		mapfile -t objv <<<"$objs"
		(cd "$obj" && rm -f "${objv[@]}")
		kmake "$tree" "$obj" -k "${objv[@]}" >"$logs/$name.compile.log" 2>&1
		rc=$?
		warn=$(grep -E -i 'warning|error' "$logs/$name.compile.log")
		missing=""
		for o in $objs; do [ -f "$obj/$o" ] || missing="$missing $o"; done
		desc="$kline $name: W=1 compile of the $(echo "$objs" | wc -w) touched objects built here, no warning"
		[ $rc -eq 0 ] && [ -z "$missing" ] && step_ok=1
		if [ $step_ok -eq 1 ] && [ -z "$warn" ]; then
			tap_ok "$desc ($(secs_since $t0))"
		else
			tap_not_ok "$desc"
			[ $rc -eq 0 ] || tap_diag "make exited $rc (log: $logs/$name.compile.log)"
			[ -z "$missing" ] || tap_diag "not made:$missing"
			grep -E -i -A4 'warning|error' "$logs/$name.compile.log" | head -n 60 | tap_diag
		fi
		notbuilt=$(echo "$want_objs" | grep -vxF -f <(echo "$objs") | tr '\n' ' ')
		[ -z "$notbuilt" ] || tap_diag "$kline $name: not built in this configuration: $notbuilt"
	fi
	if [ $step_ok -eq 0 ]; then
		for step in "${steps[@]:2}"; do tap_skip "$kline $name: $step" "the objects were not made"; done
		continue
	fi

	# exports
	table=$(cd "$obj" && ksym_table "${objv[@]}")
	echo "$table" >"$logs/$name.exports"
	n_all=$(echo "$table" | grep -c .)
	bad="" found=0 expect=0 absent=""
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
	if [ "$hooks" = n ]; then
		other=$(echo "$table" | awk '$2 == "MMTUNE" { print $1 }' | tr '\n' ' ')
		[ -z "$other" ] || bad="$bad namespace MMTUNE: $other"
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
	[ -z "$absent" ] || tap_diag "$kline $name: exported from objects not built here:$absent"

	# module
	if [ "$hooks" = n ]; then
		tap_skip "$kline $name: make M=module" "CONFIG_MMTUNE_HOOKS=n: mmtune.ko needs the hook API"
	else
		t0=$SECONDS
		mod=$work/mod-$name
		rm -rf "$mod"
		mkdir -p "$mod"
		cp "$repo"/module/Kbuild "$repo"/module/*.[ch] "$mod"/
		rm -f "$mod"/*.mod.c
		kmake "$tree" "$obj" M="$mod" KBUILD_MODPOST_WARN=1 modules >"$logs/$name.module.log" 2>&1
		rc=$?
		# No vmlinux, so no Module.symvers: modpost says so and cannot
		# resolve the kernel's symbols; BTF needs vmlinux too.
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
			feats=$(cd "$mod" && ls swap_slots.o thp_swap.o split_zero.o zswap_large.o pcp_high.o 2>/dev/null | sed 's/\.o$//' | tr '\n' ' ')
			tap_ok "$desc ($uses imports; features built: ${feats% }; $(secs_since $t0))"
		else
			tap_not_ok "$desc"
			[ $rc -eq 0 ] || tap_diag "make exited $rc (log: $logs/$name.module.log)"
			[ -z "$bad" ] || tap_diag "used by mmtune.ko but not exported in namespace MMTUNE here:$bad"
			[ -z "$warn" ] || echo "$warn" | head -n 40 | tap_diag
		fi
	fi

	# identity: the touched objects and those including a touched header,
	# here and from the unpatched tree with the same config (the unpatched
	# Kconfig drops the MMTUNE_HOOKS line) and flags. Warnings of the
	# untouched ones are not this series'.
	[ "$name" = hooks-off ] || continue
	t0=$SECONDS
	sobj=$work/o-stock
	mkdir -p "$sobj"
	if ! idobjs=$(built_objs "$obj" $(identity_objs)) || [ -z "$idobjs" ]; then
		tap_not_ok "$kline hooks-off: objdump -dr identical to the unpatched tree's: cannot tell which objects are built"
		continue
	fi
	mapfile -t objv <<<"$idobjs"
	extra=$(echo "$idobjs" | grep -vxF -f <(echo "$objs"))
	if [ -n "$extra" ]; then
		(cd "$obj" && rm -f $extra)
		kmake "$tree" "$obj" -k $extra >"$logs/$name.identity.log" 2>&1
	fi
	grep -v '^# CONFIG_MMTUNE_HOOKS is not set$' "$obj/.config" >"$sobj/.config"
	diffs=""
	if ! kmake "$stock" "$sobj" olddefconfig >"$logs/stock.config.log" 2>&1 ||
		! cmp -s <(grep -v MMTUNE "$obj/.config") <(grep -v MMTUNE "$sobj/.config"); then
		tap_not_ok "$kline hooks-off: objdump -dr identical to the unpatched tree's: the unpatched config differs"
		diff <(grep -v MMTUNE "$obj/.config") <(grep -v MMTUNE "$sobj/.config") | head -n 20 | tap_diag
		continue
	fi
	if ! kmake "$stock" "$sobj" modules_prepare >"$logs/stock.prepare.log" 2>&1; then
		tap_not_ok "$kline hooks-off: objdump -dr identical to the unpatched tree's: make modules_prepare (unpatched) failed"
		continue
	fi
	(cd "$sobj" && rm -f "${objv[@]}")
	kmake "$stock" "$sobj" -k "${objv[@]}" >"$logs/stock.compile.log" 2>&1
	for o in "${objv[@]}"; do
		if [ ! -f "$sobj/$o" ]; then
			diffs="$diffs $o (unpatched: not made)"
		elif ! cmp -s <(cd "$obj" && objdump -dr "$o" | tail -n +3) <(cd "$sobj" && objdump -dr "$o" | tail -n +3); then
			diffs="$diffs $o ($(diff <(cd "$obj" && objdump -dr "$o" | tail -n +3) <(cd "$sobj" && objdump -dr "$o" | tail -n +3) | grep -c '^[<>]') lines)"
		fi
	done
	desc="$kline hooks-off: objdump -dr of the ${#objv[@]} objects identical to the unpatched tree's ($(echo "${objv[@]}" | tr ' ' ','))"
	if [ -z "$diffs" ]; then
		tap_ok "$desc ($(secs_since $t0))"
	else
		tap_not_ok "$desc"
		tap_diag "differ:$diffs"
	fi
done

[ "$tap_failed" -eq 0 ]

#!/bin/bash
# Kernel instructions (and lock calls) per operation, per mmtune feature,
# side by side from one run: the unpatched bench kernel, the patched one
# with mmtune unloaded, loaded with every feature off, and with the
# feature on. Exact counts (tests/bench/icount: one vCPU, -icount), on the
# production-like bench kernels (make kernel-bench).
#
#   tests/bench/icount-features.sh [--line LINE] [--peer LINE2] [--runs N] [--rounds R]
#       [--configs LIST] [--keep] [FEATURE...]
#   tests/bench/run.sh icount [...]      the same
#
# The kernels are build/LINE/kernel-bench-prod and
# build/LINE/kernel-bench-unpatched (make kernel-bench [LINE=6.12]; make
# bench-icount builds them and runs this; --line default 6.1), and the
# features of that line (knobs.tsv's lines column): on 6.12 zswap_large
# and thp_swap, and the 16K and 64K folio stores (sets zswap16, zswap64)
# beside the 2M one. --peer LINE2 adds a configuration "upstream":
# build/LINE2/kernel-bench-unpatched, another kernel line of the same
# config without the series (scripts/kernel-build-bench.sh LINE2
# bench-unpatched; 7.3 for 6.12: zswap stores large folios itself), run with
# the same operations, and the report compares mmtune with it per
# operation. Reports in build/icount/features (6.1) or
# build/icount/features-LINE.
# --configs: a comma-separated subset of unpatched,unloaded,off,on (and
# upstream, with --peer).
# --keep: a configuration whose report directory holds the results of the
# same inputs (kernel, module, scripts, phases, ops, runs, rounds, the
# harness's sources) is not run again (the counts repeat: -icount), only
# tabled; without --keep every configuration runs.
#
# FEATURE: hooks (no feature on: the hooks' own cost) or a feature group
# of sysfs-docs/knobs.tsv; default all. Each feature names the
# operations it is about; "hooks" takes them all:
#   mem      fault4k, allocfree (16384 ops per round)          pcp_high
#   disk     pageout, swapin: 4K pages, swap on brd (RAM disk)  swap_slots
#   zram     pageout, swapin: swap on zram (lz4)               swap_slots
#   zswap    pageout, swapin: zswap (lz4, zsmalloc) on brd      swap_slots
#   zswapthp thpout: a THP stored by zswap (32 per round)       zswap_large
#   split    splitzero: a THP with 511 zero subpages split      split_zero
#            by debugfs split_huge_pages (32 per round)
#   thpsparse sparseout: a THP with 16 data subpages swapped    thp_swap
#            out to brd (32 per round)
#   zswap64  thp64out: 64K folios stored by zswap (512 per      zswap_large
#            round; lines with mTHP only); thp64in: read back
#            (loaded whole where zswap_large's load_64kB allows)
#   zswap16  thp16out, thp16in: the same with 16K folios (2048  zswap_large
#            per round)
#   zswapbad thpbadout: a THP whose last page is random (32 per  zswap_large
#            round; lines with mTHP, whose zswap stores raw pages)
#   cross    crosscpu: a page faulted in on one CPU and freed   pcp_high
#            on the other: 2 vCPUs, so without -icount (counts
#            follow host timing; zone->lock calls are the point)
#   cgfault  faultthp: a 2M THP write fault (32 per round), in   cgroup_policy
#            a cgroup two levels below a thousand siblings
#   cgfault64 fault64k: 64K folio faults (512 per round; lines  cgroup_policy
#            with mTHP only), the same cgroup
#   cgfault16 fault16k: 16K folio faults (2048 per round), the   cgroup_policy
#            same
# The "on" column of a feature: pcp_high enabled=1; swap_slots enabled=1
# cache_size=512; zswap_large enabled=1; split_zero enabled=1 mode=always;
# thp_swap enabled=1 (policy adaptive) with split_zero enabled=1 (mode
# reclaim-only), the pair that keeps zero subpages out of swap;
# cgroup_policy enabled=1 with 1000 entries (orders=all: the lookup is
# measured, not a narrowed fault), one on the faulting cgroup's parent.
#
# Runs (boots) per configuration: --runs (3), each --rounds (4) measured
# rounds after one warm-up. Two configurations boot at a time (one host CPU
# each; -icount makes the counts independent of host load). Reports:
# build/icount/features/SET-CONFIG/ (run.sh's) and the tables in
# build/icount/features/report.txt.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/tests/bench
runs=3 rounds=4 configs='' keep=0 line=6.1 peer=''
features=()
while [ $# -gt 0 ]; do
	case "$1" in
	--line) line=$2; shift ;;
	--peer) peer=$2; shift ;;
	--runs) runs=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--configs) configs=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "icount-features: unknown argument $1 (--help)" >&2; exit 2 ;;
	*) features+=("$1") ;;
	esac
	shift
done
[ -n "$configs" ] || configs=unpatched,unloaded,off,on${peer:+,upstream}
[ -n "$peer" ] || [[ ,$configs, != *,upstream,* ]] || { echo "icount-features: upstream needs --peer" >&2; exit 2; }
# The feature groups the line offers, in the order of the knob table.
mapfile -t groups < <(awk -F'\t' -v l="$line" '$1 != "." && $1 !~ /^#/ && $2 == "enabled" &&
	(" " $8 " ") ~ (" " l " ") { print $1 }' "$repo/sysfs-docs/knobs.tsv")
[ ${#groups[@]} -gt 0 ] || { echo "icount-features: no feature offered on line $line (knobs.tsv)" >&2; exit 2; }
for f in "${features[@]}"; do
	[[ " hooks ${groups[*]} " == *" $f "* ]] ||
		{ echo "icount-features: no feature $f (hooks ${groups[*]})" >&2; exit 2; }
done
all_features=0
[ ${#features[@]} -gt 0 ] || { features=(hooks "${groups[@]}"); all_features=1; }

log() { echo "icount-features: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The kernels, and mmtune.ko built against bench-prod in a copy of module/
# (module/ keeps the test kernel's objects).
if [ "$line" = 6.1 ]; then
	out=$repo/build/icount/features make_line=
else
	out=$repo/build/icount/features-$line make_line=" LINE=$line"
fi
kpre=$line/kernel-bench
for k in prod unpatched; do
	[ $k = prod ] || [[ ,$configs, == *,unpatched,* ]] || continue
	[ -f "$repo/build/$kpre-$k/arch/x86/boot/bzImage" ] ||
		die "no build/$kpre-$k (make kernel-bench$make_line)"
done
prod=$(readlink -f "$repo/build/$kpre-prod")
unpatched=$(readlink -f "$repo/build/$kpre-unpatched" || true)
upstream=
if [ -n "$peer" ]; then
	[ -f "$repo/build/$peer/kernel-bench-unpatched/arch/x86/boot/bzImage" ] ||
		die "no build/$peer/kernel-bench-unpatched (scripts/kernel-build-bench.sh $peer bench-unpatched)"
	upstream=$(readlink -f "$repo/build/$peer/kernel-bench-unpatched")
fi
mkdir -p "$out"
moddir=$out/module-bench-prod
rm -rf "$moddir"
cp -r "$repo/module" "$moddir"
make -s -C "$moddir" KDIR="$prod" module >"$out/module-build.log" 2>&1 ||
	{ cat "$out/module-build.log" >&2; die "mmtune.ko does not build against $prod"; }

# The sets wanted: a feature's own, "hooks" all of them.
declare -A want=() feature_of=(
	[mem]=pcp_high [disk]=swap_slots [zram]=swap_slots [zswap]=swap_slots
	[zswapthp]=zswap_large [split]=split_zero [cross]=pcp_high
	[thpsparse]=thp_swap [zswap64]=zswap_large [zswap16]=zswap_large
	[cgfault]=cgroup_policy [cgfault64]=cgroup_policy [cgfault16]=cgroup_policy
	[zswapbad]=zswap_large)
# 6.1: the sets as they were. A line with mTHP (every other one) also
# stores 64K and 16K folios; "cross" is pcp_high's (2 vCPUs, no -icount:
# its counts follow the host's timing), so only where pcp_high is offered.
if [ "$line" = 6.1 ]; then
	sets=(mem disk zram zswap zswapthp split cross thpsparse cgfault)
else
	sets=(mem disk zram zswap zswapthp zswap64 zswap16 zswapbad split thpsparse cgfault cgfault64 cgfault16)
	[[ " ${groups[*]} " != *" pcp_high "* ]] || sets+=(cross)
fi
for f in "${groups[@]}"; do
	[[ " ${feature_of[*]} " == *" $f "* ]] || die "feature $f has no operation set here: add one"
done
for f in "${features[@]}"; do
	for s in "${sets[@]}"; do
		[ "$f" = hooks ] || [ "${feature_of[$s]}" = "$f" ] && want[$s]=1
	done
done
on_wanted() { local f; for f in "${features[@]}"; do [ "$f" = "${feature_of[$1]}" ] && return 0; done; return 1; }

scripts=$out/scripts
rm -rf "$scripts"
mkdir -p "$scripts"
cat >"$scripts/insmod.sh" <<'EOF'
insmod /files/mmtune.ko
EOF
# Swap and debugfs, per set (prep: after the symbols are read).
swap_disk='mkswap /dev/ram0 >/dev/null
swapon /dev/ram0'
declare -A prep=(
	[mem]=':'
	[disk]="$swap_disk"
	[zram]='echo lz4 >/sys/block/zram0/comp_algorithm
echo 512M >/sys/block/zram0/disksize
mkswap /dev/zram0 >/dev/null
swapon /dev/zram0'
	[zswap]="$swap_disk
echo 1 >/sys/module/zswap/parameters/enabled"
	[zswapthp]="$swap_disk
echo 1 >/sys/module/zswap/parameters/enabled"
	[split]='mount -t debugfs debugfs /sys/kernel/debug'
	[cross]=':'
	[thpsparse]="$swap_disk")
# mTHP sets: zswap on brd as zswapthp, and only the set's folio size on
# ("always"), every other size "never".
mthp_only() {
	echo "for d in /sys/kernel/mm/transparent_hugepage/hugepages-*kB; do echo never >\$d/enabled; done
echo always >/sys/kernel/mm/transparent_hugepage/hugepages-$1kB/enabled"
}
prep[zswap64]="${prep[zswapthp]}
$(mthp_only 64)"
prep[zswap16]="${prep[zswapthp]}
$(mthp_only 16)"
prep[zswapbad]=${prep[zswapthp]}
# The fault sets, in every configuration: the program runs in
# /bench/cg500/w (memory controller on at each level), beside 999 other
# children of /bench; THP "always" (2M) or one mTHP size only.
# shellcheck disable=SC2016 # the guest's shell expands it
cg_prep='mount -t cgroup2 none /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/bench
echo +memory >/sys/fs/cgroup/bench/cgroup.subtree_control
i=0
while [ $i -lt 1000 ]; do mkdir /sys/fs/cgroup/bench/cg$i; i=$((i + 1)); done
echo +memory >/sys/fs/cgroup/bench/cg500/cgroup.subtree_control
mkdir /sys/fs/cgroup/bench/cg500/w
echo /sys/fs/cgroup/bench/cg500/w >/icount.cgroup
echo always >/sys/kernel/mm/transparent_hugepage/enabled'
prep[cgfault]=$cg_prep
prep[cgfault64]="$cg_prep
$(mthp_only 64)"
prep[cgfault16]="$cg_prep
$(mthp_only 16)"
declare -A on=(
	[pcp_high]='echo 1 >/sys/kernel/mm/mmtune/pcp_high/enabled'
	[swap_slots]='echo 512 >/sys/kernel/mm/mmtune/swap_slots/cache_size
echo 1 >/sys/kernel/mm/mmtune/swap_slots/enabled'
	[zswap_large]='echo 1 >/sys/kernel/mm/mmtune/zswap_large/enabled'
	[split_zero]='echo always >/sys/kernel/mm/mmtune/split_zero/mode
echo 1 >/sys/kernel/mm/mmtune/split_zero/enabled'
	[thp_swap]='echo 1 >/sys/kernel/mm/mmtune/thp_swap/enabled
echo 1 >/sys/kernel/mm/mmtune/split_zero/enabled')
# shellcheck disable=SC2016 # the guest's shell expands it
on[cgroup_policy]='echo 1 >/sys/kernel/mm/mmtune/cgroup_policy/enabled
i=0
while [ $i -lt 1000 ]; do echo "/bench/cg$i orders=all" >/sys/kernel/mm/mmtune/cgroup_policy/entries; i=$((i + 1)); done
[ "$(cat /sys/kernel/mm/mmtune/cgroup_policy/nr_entries)" = 1000 ]'
# Where split_zero is not offered (6.12: a split maps zero subpages to the
# zero page itself), thp_swap alone.
[[ " ${groups[*]} " == *" split_zero "* ]] ||
	on[thp_swap]='echo 1 >/sys/kernel/mm/mmtune/thp_swap/enabled'
declare -A phases=([mem]='fault4k allocfree' [disk]='pageout swapin' [zram]='pageout swapin'
	[zswap]='pageout swapin' [zswapthp]=thpout [split]=splitzero [cross]=crosscpu
	[thpsparse]=sparseout [zswap64]='thp64out thp64in' [zswap16]='thp16out thp16in'
	[cgfault]=faultthp [cgfault64]=fault64k [cgfault16]=fault16k [zswapbad]=thpbadout)
declare -A ops=([mem]=16384 [disk]=4096 [zram]=4096 [zswap]=4096 [zswapthp]=32 [split]=32
	[cross]=65536 [thpsparse]=32 [zswap64]=512 [zswap16]=2048
	[cgfault]=32 [cgfault64]=512 [cgfault16]=2048 [zswapbad]=32)
# Functions counted by calls: zone->lock's takers (rmqueue_bulk,
# free_pcppages_bulk, free_one_page, rmqueue_buddy), si->lock's
# (get_swap_pages, the series' get_swap_pages_batch that the module's slot
# cache refills with, swapcache_free_entries: each takes it once per swap
# device, scan_swap_map_slots again after 256 slots), the zero checks
# (memcmp: pages_identical(); memchr_inv) and compressions.
calls=(rmqueue_bulk free_pcppages_bulk free_one_page rmqueue_buddy
	get_swap_pages get_swap_pages_batch swapcache_free_entries memchr_inv memcmp
	LZ4_compress_fast zs_malloc split_huge_page_to_list)

# One job per set and configuration: "SET CONFIG".
jobs=()
for s in "${sets[@]}"; do
	[ -n "${want[$s]:-}" ] || continue
	for c in unpatched unloaded off on upstream; do
		[[ ,$configs, == *,$c,* ]] || continue
		[ $c = on ] && { ! on_wanted "$s" || [[ " ${groups[*]} " != *" ${feature_of[$s]} "* ]]; } && continue
		jobs+=("$s $c")
		{
			echo "${prep[$s]}"
			[ $c = on ] && echo "${on[${feature_of[$s]}]}"
			true
		} >"$scripts/$s-$c.prep"
	done
done

# job SET CONFIG: run.sh for it, its log in $out/SET-CONFIG.log.
job() {
	local s=$1 c=$2 args=() k=$prod stamp

	case $c in
	unpatched) args=(--kdir "$unpatched"); k=$unpatched ;;
	upstream) args=(--kdir "$upstream"); k=$upstream ;;
	unloaded) args=(--kdir "$prod") ;;
	*) args=(--kdir "$prod" --setup "$scripts/insmod.sh" --file "$moddir/mmtune.ko") ;;
	esac
	stamp=$( {
		echo "$s $c ${phases[$s]} ${ops[$s]} $runs $rounds ${calls[*]}"
		cat "$k/arch/x86/boot/bzImage" "$scripts/$s-$c.prep" "$here"/icount/*.c "$here"/icount/init
		[ "${args[2]:-}" != --setup ] || cat "$scripts/insmod.sh" "$moddir/mmtune.ko"
	} | sha256sum | cut -c1-16)
	if [ $keep -eq 1 ] && [ "$(cat "$out/$s-$c/inputs" 2>/dev/null)" = "$stamp" ]; then
		log "$s $c kept (same inputs as $(date -r "$out/$s-$c/inputs" -u +%FT%TZ))"
		return 0
	fi
	case $s in
	disk|zswap|zswapthp|thpsparse|zswap64|zswap16|zswapbad) args+=(--append brd.rd_size=524288) ;;
	cross) args+=(--smp 2) ;;
	esac
	for f in "${calls[@]}"; do args+=(--call "$f"); done
	# shellcheck disable=SC2086
	if ! "$repo/tests/bench/icount/run.sh" "${args[@]}" --prep "$scripts/$s-$c.prep" \
		--label "$(basename "$out")/$s-$c" --runs "$runs" --rounds "$rounds" --top 30 \
		--ops "${ops[$s]}" ${phases[$s]} >"$out/$s-$c.log" 2>&1; then
		log "$s $c failed: $(tail -n 3 "$out/$s-$c.log")"
		return 1
	fi
	echo "$stamp" >"$out/$s-$c/inputs"
	log "$s $c done"
}

start=$(date +%s) load0=$(cut -d' ' -f1-3 /proc/loadavg)
log "${#jobs[@]} configurations x $runs boots, two at a time"
# The module's symbols first (one kallsyms boot, shared by off and on).
first=()
for j in "${jobs[@]}"; do case $j in *' off') read -ra first <<<"$j"; break ;; esac; done
[ ${#first[@]} -eq 0 ] || (job "${first[@]}") || die "${first[*]} failed"
rest=()
for j in "${jobs[@]}"; do [ "$j" = "${first[*]:-}" ] || rest+=("$j"); done
fail=0
for j in "${rest[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || fail=1; done
	# shellcheck disable=SC2086
	job $j &
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || fail=1; done
[ $fail -eq 0 ] || die "a configuration failed (logs in $out)"
log "all configurations in $(( $(date +%s) - start ))s"

dirs=()
for j in "${jobs[@]}"; do dirs+=("$out/${j/ /-}"); done
command="tests/bench/icount-features.sh$([ "$line" = 6.1 ] || echo " --line $line")${peer:+ --peer $peer} --runs $runs --rounds $rounds --configs $configs$([ $keep -eq 0 ] || echo ' --keep') ${features[*]}"
# kernel.release names the tree; bench-unpatched and bench-prod are its config
release() { cat "$1/include/config/kernel.release" 2>/dev/null || basename "$(dirname "$1")"; }
kernels="bench-unpatched $(release "$unpatched"), bench-prod $(release "$prod")${upstream:+, upstream $(release "$upstream")}"
rm -rf "$out/tables"
{
	echo "command: $command"
	for j in "${jobs[@]}"; do echo "${j/ /-}: run $(date -r "$out/${j/ /-}/inputs" -u +%FT%TZ), inputs $(cat "$out/${j/ /-}/inputs")"; done
	echo "kernels: $kernels"
	python3 "$here/icount/features.py" --tables "$out/tables" "${dirs[@]}"
} | tee "$out/report.txt"
# Every feature measured: the tables are the line's results
# (results/icount-LINE.tsv, results/icount-goals-LINE.tsv; rendered into
# the docs by scripts/render-results.py). A subset would replace them
# with part of a table: rerun without FEATURE (with --keep, only what
# changed runs).
if [ $all_features -eq 1 ] && [ "$configs" = unpatched,unloaded,off,on${peer:+,upstream} ]; then
	for t in ops goals; do
		python3 "$here/results.py" write "icount$([ $t = ops ] || echo -goals)-$line" --command "$command" \
			--kernel "$kernels" --start-load "$load0" <"$out/tables/$t.tsv"
	done
else
	log "results/icount-$line.tsv not written: not every feature and configuration measured"
fi

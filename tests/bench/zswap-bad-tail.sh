# zswap_large and pages that do not compress (6.12): anonymous folios of
# 16K, 64K and 2M, through ten reclaim passes in a memcg with
# memory.zswap.writeback=0, so that what zswap refuses stays in memory and
# is tried again at every pass. Two patterns: a bad tail (the last page of
# every folio random, the rest compressible) and a third (every third
# page random). Three configurations, each from a fresh module load:
#   refuse    store_<size>kB=0: the folio is refused before any
#             compression, as stock 6.12 refuses it
#   rollback  max_raw_percent=0: a page that does not compress rolls its
#             folio back, every compression of the folio thrown away
#   raw       the default max_raw_percent: such pages stored as they are
#             within the folio, until more than that share of it is raw
# The figures are counters, not times: folios stored whole, pages stored
# and stored raw, compressions thrown away (zswap_large's
# subpages_rolled_back), zswap's reject_compress_poor and _fail, the pages
# left in memory after the passes. Every byte is read back and compared.
# Guest side; run it with tests/bench/run.sh zswap-bad-tail.
# line: 6.12
# kernel: bench-prod
# timeout: 5400
. /lib.sh
. "$(dirname "$0")/lib-bench.sh"
passes=${BENCH_PASSES:-10}
size=${BENCH_SIZE_MIB:-16}

echo "== zswap-bad-tail: ${size} MiB of anonymous folios per run, $passes MADV_PAGEOUT passes, memory.zswap.writeback=0"
echo "== $(bench_machine); swap: virtio disk; zswap lz4/zsmalloc"
load_mmtune
[ -e "$MMTUNE_ZSWAP/max_raw_percent" ] || { bench_failed "this kernel has no raw pages (max_raw_percent)"; exit 0; }
swapon_disk
zswap_enable
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
raw_default=$(awk -F'\t' '$1 == "zswap_large" && $2 == "max_raw_percent" { print $5 }' /sysfs-docs/knobs.tsv)

counters() {
	echo "$(mmtune_zswap thp_stored) $(mmtune_zswap subpages_stored) $(mmtune_zswap subpages_raw)" \
		"$(mmtune_zswap subpages_rolled_back) $(zswap_rejects_poor)"
}

# run CONFIG PATTERN KB: one run; a line of deltas in $results.
run() {
	bench_unload
	load_mmtune
	case $1 in
	refuse) echo 0 >"$MMTUNE_ZSWAP/store_$3kB" ;;
	rollback) echo 0 >"$MMTUNE_ZSWAP/max_raw_percent" ;;
	raw) echo "$raw_default" >"$MMTUNE_ZSWAP/max_raw_percent" ;;
	esac
	echo 1 >"$MMTUNE_ZSWAP/enabled" || bench_failed "enable zswap_large"
	every=3
	[ "$2" = tail ] && every=$(mthp_pages "$3")
	mthp_only "$3"
	swap_refresh
	set -- "$1" "$2" "$3" $(counters)
	swap_integrity --thp --mthp "$3" --size "$size" --fill compressible --random-every "$every" \
		--evict pageout --passes "$passes" --zswap-writeback 0 --min-out-pct 0 --min-mthp-pct 90 \
		--seed 7 >/tmp/run.out 2>&1 || { cat /tmp/run.out; bench_failed "$1 $2 $3kB: swap_integrity"; }
	folios=$(si_delta /tmp/run.out region_folios) left=$(si_delta /tmp/run.out resident_evicted)
	set -- "$@" $(counters)
	echo "$1 $2 $3 $folios $(($9 - $4)) $((${10} - $5)) $((${11} - $6)) $((${12} - $7)) $((${13} - $8)) $left" >>"$results"
	echo "$1 $2 ${3}kB: $(tail -n 1 "$results")"
}

: >"$results"
for pattern in tail third; do
	for kb in 16 64 2048; do
		for config in refuse rollback raw; do
			run $config $pattern $kb
		done
	done
done
bench_unload
swapoff_all

echo
echo "== results: one run each; whole = folios stored whole, stored/raw = pages, thrown = compressions rolled back, poor = zswap's reject_compress_poor + _fail, left = pages in memory after the passes"
awk -v passes="$passes" "$BENCH_AWK"'
BEGIN { row("pattern\tsize\tconfig\tfolios\twhole\tstored\traw\tthrown\tpoor\tleft") }
{ row(sprintf("%s\t%skB\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d", $2, $3, $1, $4, $5, $6, $7, $8, $9, $10)) }
' "$results"

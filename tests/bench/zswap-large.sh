# zswap storing THPs whole (issue 3): swap-out throughput of a usemem-like
# writer at 1.5x its memcg limit, three configurations in one boot, rounds
# interleaved so that drift in the host hits all three alike:
#   stock     mmtune not loaded: zswap refuses THPs, they go to the disk
#   split-4k  mmtune not loaded, swap on a file (ext2) on the same disk:
#             6.1 allocates THP swap clusters on block devices only, so
#             reclaim splits every THP and zswap takes the 4K pages (what
#             THP_SWAP=n does); 4K slots are still allocated in clusters,
#             as on the block device (the disk is non-rotational)
#   mmtune    mmtune zswap_large on: zswap stores THPs whole
# Then single-thread lz4 and zstd speed (-b1, 4K blocks) on the same bytes.
# Guest side; run it with tests/bench/run.sh zswap-large.
# disk-bps: 524288000
# host-compressors: yes
. /lib.sh
. "$(dirname "$0")/lib-bench.sh"
limit=${BENCH_LIMIT_MIB:-512}
size=$((limit * 3 / 2))
rounds=${BENCH_ROUNDS:-3}

echo "== zswap-large: usemem writes ${size} MiB (compressible, ~4:1) in a memcg with memory.max=${limit} MiB"
echo "== $(bench_machine); swap: 4 GiB virtio disk, $(bench_disk_limit); zswap lz4/zsmalloc, max_pool_percent 20"

thp_always
zswap_enable
echo +memory >/sys/fs/cgroup/cgroup.subtree_control

# setup CONFIG: module and swap device as CONFIG wants them.
setup() {
	swapoff /mnt/swapfile 2>/dev/null
	umount /mnt 2>/dev/null
	swapoff_all
	bench_unload
	echo 0 >/sys/block/vda/queue/rotational
	if [ "$1" = split-4k ]; then
		mkdir -p /mnt
		{ mke2fs -q /dev/vda && mount -t ext2 /dev/vda /mnt &&
			dd if=/dev/zero of=/mnt/swapfile bs=1M count=1024 2>/dev/null &&
			mkswap /mnt/swapfile && swapon /mnt/swapfile; } >/dev/null || bench_failed "swap file"
	else
		mkswap /dev/vda >/dev/null && swapon /dev/vda || bench_failed "swapon"
	fi
	if [ "$1" = mmtune ]; then
		insmod "$MMTUNE_KO" && echo 1 >"$MMTUNE_ZSWAP/enabled" || bench_failed "mmtune"
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory
}

# run CONFIG ROUND: one usemem run, one line of results.
run() {
	setup "$1"
	set -- "$1" "$2" $(vmstat pswpout) $(vmstat zswpout) $(vmstat thp_swpout) $(vmstat thp_swpout_fallback)
	bench_in_memcg "$limit" usemem --size "$size" --fill compressible || bench_failed "$1 round $2: $out"
	echo "$1 round $2: $out"
	mbps=$(bench_value mbps "$out") sys=$(bench_value sys_s "$out")
	echo "$1 $2 $mbps $sys $(( $(vmstat pswpout) - $3 )) $(( $(vmstat zswpout) - $4 ))" \
		"$(( $(vmstat thp_swpout) - $5 )) $(( $(vmstat thp_swpout_fallback) - $6 ))" >>"$results"
}

round() { for config in stock split-4k mmtune; do run $config $1; done; }
bench_rounds round
stored=$(cat "$MMTUNE_ZSWAP/thp_stored") fallbacks=$(cat "$MMTUNE_ZSWAP/fallback_disk")
rmmod mmtune
swapoff_all

# Raw compressor speed, single thread, 4K blocks as zswap compresses.
usemem --dump /tmp/bench.data --size 64 --fill compressible
lz4_mbps=$(bench_mbps lz4 -b1 -B4096 /tmp/bench.data)
zstd_mbps=$(bench_mbps zstd -b1 -B4096 /tmp/bench.data)
rm -f /tmp/bench.data

# Medians per configuration, then the table of ratios.
bench_mbps_header "$rounds"
awk -v lz4="$lz4_mbps" -v zstd="$zstd_mbps" -v stored="$stored" -v fallbacks="$fallbacks" "$BENCH_AWK"'
{
	add_round(); pswp[$1] += $5; zswp[$1] += $6; thp[$1] += $7; fb[$1] += $8
}
END {
	medians("stock split-4k mmtune")
	row("config\tMB/s\tsys s\tvs stock\tvs split-4k\tpswpout\tzswpout\tthp_swpout\tfallback")
	for (i = 1; i <= 3; i++) {
		c = order[i]
		row(sprintf("%s\t%.1f\t%.2f\t%.2fx\t%.2fx\t%d\t%d\t%d\t%d", c, m[c], s[c], m[c] / m["stock"], m[c] / m["split-4k"],
			pswp[c] / n[c], zswp[c] / n[c], thp[c] / n[c], fb[c] / n[c]))
	}
	printf "(vmstat columns: mean per round; fallback = thp_swpout_fallback, THPs split for swap)\n"
	printf "mmtune zswap/thp_stored %d, zswap/fallback_disk %d over all mmtune rounds\n", stored, fallbacks
	printf "\nraw single-thread compression, 4K blocks, same bytes: lz4 -b1 %.1f MB/s, zstd -b1 %.1f MB/s\n", lz4, zstd
	printf "mmtune (zswap lz4) swap-out throughput = %.0f%% of raw lz4, %.0f%% of raw zstd\n", 100 * m["mmtune"] / lz4, 100 * m["mmtune"] / zstd
	printf "\ngoals: mmtune >= 1.25x split-4k: %s (%.2fx); mmtune >= 5x stock: %s (%.2fx); >= 70%% of raw lz4: %s (%.0f%%)\n",
		(m["mmtune"] >= 1.25 * m["split-4k"] ? "met" : "NOT met"), m["mmtune"] / m["split-4k"],
		(m["mmtune"] >= 5 * m["stock"] ? "met" : "NOT met"), m["mmtune"] / m["stock"],
		(m["mmtune"] >= 0.7 * lz4 ? "met" : "NOT met"), 100 * m["mmtune"] / lz4
}' "$results"

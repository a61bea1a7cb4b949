# The swap slot cache (issue 6): swap-out throughput of a usemem-like
# multi-process writer at 1.5x its memcg limit, swap on zram, 4K pages,
# four configurations in one boot, rounds interleaved so that drift in the
# host hits all of them alike:
#   stock       mmtune not loaded: the kernel's 64-slot cache
#   mmtune-64   mmtune's cache at 64 slots per CPU (the stock size)
#   mmtune-256  ... at 256
#   mmtune-512  ... at 512
# For the mmtune configurations the module's counters give the swap device
# lock round trips per slot: refill calls per slot allocated and batch
# returns per slot freed. The stock cache has no counters; by construction
# it refills 64 slots per trip at best.
# Guest side; run it with tests/bench/run.sh swap-slots.
. /lib.sh
. "$(dirname "$0")/lib-bench.sh"
limit=${BENCH_LIMIT_MIB:-384}
size=$((limit * 3 / 2))
procs=${BENCH_PROCS:-4}
rounds=${BENCH_ROUNDS:-3}
configs="stock mmtune-64 mmtune-256 mmtune-512"

echo "== swap-slots: usemem, $procs processes, writes ${size} MiB (4K pages, compressible) in a memcg with memory.max=${limit} MiB"
echo "== $(bench_machine); swap: zram 2 GiB (lz4)"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control

setup() {
	bench_unload
	swapoff_all
	echo 1 >/sys/block/zram0/reset
	echo lz4 >/sys/block/zram0/comp_algorithm
	echo 2G >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 ||
		bench_failed "zram swap"
	case $1 in
	mmtune-*)
		insmod "$MMTUNE_KO" && echo "${1#mmtune-}" >"$MMTUNE_SLOTS/cache_size" &&
			echo 1 >"$MMTUNE_SLOTS/enabled" || bench_failed "mmtune"
		;;
	esac
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# run CONFIG ROUND: one usemem run, one line of results.
run() {
	setup "$1"
	set -- "$1" "$2" $(vmstat pswpout)
	bench_in_memcg "$limit" usemem --size "$size" --procs "$procs" --no-thp --fill compressible ||
		bench_failed "$1 round $2: $out"
	mbps=$(bench_value mbps "$out") sys=$(bench_value sys_s "$out")
	c="0 0 0 0 0 0"
	if [ -d "$MMTUNE_SLOTS" ]; then
		# Drain first, so that every cached free counts as returned.
		echo 0 >"$MMTUNE_SLOTS/enabled"
		c="$(slots alloc) $(slots alloc_hit) $(slots refill) $(slots refill_slots) $(slots flush) $(slots flush_slots)"
	fi
	echo "$1 round $2: $out; cache: alloc hit refill refill_slots flush flush_slots = $c"
	echo "$1 $2 $mbps $sys $(( $(vmstat pswpout) - $3 )) $c" >>"$results"
}

round() { for config in $configs; do run $config $1; done; }
bench_rounds round
bench_unload
swapoff_all

bench_mbps_header "$rounds"
awk "$BENCH_AWK"'
{
	add_round(); pswp[$1] += $5
	alloc[$1] += $6; hit[$1] += $7; refill[$1] += $8; rslots[$1] += $9; flush[$1] += $10; fslots[$1] += $11
}
END {
	medians("stock mmtune-64 mmtune-256 mmtune-512")
	row("config\tMB/s\tsys s\tvs stock\tpswpout\thit rate\tround trips per slot in\tout")
	for (i = 1; i <= 4; i++) {
		c = order[i]
		if (c == "stock") {
			row(sprintf("%s\t%.1f\t%.2f\t1.00x\t%d\t-\t>= 1/64\t>= 1/64", c, m[c], s[c], pswp[c] / n[c]))
			continue
		}
		row(sprintf("%s\t%.1f\t%.2f\t%.2fx\t%d\t%.2f%%\t1/%d\t1/%d", c, m[c], s[c], m[c] / m["stock"], pswp[c] / n[c],
			100 * hit[c] / alloc[c], int(rslots[c] / refill[c] + 0.5), int(fslots[c] / flush[c] + 0.5)))
		per[c] = rslots[c] / refill[c]; perf[c] = fslots[c] / flush[c]
	}
	printf "(trips/slot in: get_swap_pages_batch calls per slot allocated; out: batch returns per slot freed; each trip takes swap_avail_lock and/or the device lock once)\n"
	printf "\ngoals: round trips per slot <= 1/64 at 64: %s (1/%.0f in, 1/%.0f out); <= 1/256 at 512: %s (1/%.0f in, 1/%.0f out)\n",
		(per["mmtune-64"] >= 63.5 && perf["mmtune-64"] >= 63.5 ? "met" : "NOT met"), per["mmtune-64"], perf["mmtune-64"],
		(per["mmtune-512"] >= 255.5 && perf["mmtune-512"] >= 255.5 ? "met" : "NOT met"), per["mmtune-512"], perf["mmtune-512"]
	printf "throughput >= stock: mmtune-64 %.2fx, mmtune-256 %.2fx, mmtune-512 %.2fx: %s\n", m["mmtune-64"] / m["stock"],
		m["mmtune-256"] / m["stock"], m["mmtune-512"] / m["stock"],
		(m["mmtune-64"] >= m["stock"] && m["mmtune-256"] >= m["stock"] && m["mmtune-512"] >= m["stock"] ? "met" : "NOT met")
	printf "spread of the rounds (MB/s, min-max):"
	for (i = 1; i <= 4; i++) { c = order[i]; printf " %s %s;", c, range(mb[c]) }
	printf "\n"
}' "$results"

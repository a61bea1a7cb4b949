# THP swap-out policy with zero-subpage dropping (issue 5): the experiment of
# the zero-subpage series, timed. thp_sparse maps a region of THPs, dirties
# N of the 512 subpages of each (one byte at an offset), and pushes it out
# with MADV_PAGEOUT, waiting for the writes to complete:
#   best case   1 dirty subpage per THP (first byte)
#   worst case  512 dirty subpages per THP (last byte of each)
# each on zram and on the throttled virtio disk, with mmtune loaded at
#   whole       thp_swap and split_zero off: stock (hooks off)
#   adaptive    thp_swap on, policy=adaptive (32 samples, threshold 4);
#               split_zero on, mode=reclaim-only
# Rounds are interleaved (which policy runs first alternates) and medians
# reported. "time" is fault-in plus
# pageout (what the series timed); "pageout" is the pageout alone.
# Guest side; run it with tests/bench/run.sh thp-swap.
# disk-bps: 104857600
. /lib.sh
. "$(dirname "$0")/lib-bench.sh"
region_mib=${BENCH_SIZE_MIB:-256}
rounds=${BENCH_ROUNDS:-4}

echo "== thp-swap: thp_sparse, ${region_mib} MiB of THPs, MADV_PAGEOUT until written"
echo "== $(bench_machine); swap: zram 2G, or 4 GiB virtio disk at $(bench_disk_limit)"
thp_always

# run DEVICE CASE POLICY ROUND
run() {
	bench_unload
	case "$3" in
	whole) thp_setup "$1" whole never ;;
	adaptive) thp_setup "$1" adaptive reclaim-only ;;
	esac
	case "$2" in
	best) args="--dirty 1 --offset 0" ;;
	worst) args="--dirty 512 --offset 4095" ;;
	esac
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory
	out=$(thp_sparse --size "$region_mib" $args --seed "$4" --wait-writeback --no-verify) ||
		bench_failed "$1 $2 $3 round $4: $out"
	line=$(echo "$out" | grep '^deltas:')
	echo "$1 $2 $3 round $4: $line"
	echo "$1 $2 $3 $4 $(bench_value fault_s "$line") $(bench_value pageout_s "$line") $(bench_value pswpout "$line")" \
		"$(bench_value thp_swpout "$line") $(bench_value thps "$line")" >>"$results"
}

round() {
	for dev in zram disk; do
		for case in best worst; do
			# Alternate which policy goes first from round to round.
			order="whole adaptive"
			[ $(($1 % 2)) = 0 ] && order="adaptive whole"
			for policy in $order; do
				run $dev $case $policy $1
			done
		done
	done
}
bench_rounds round
bench_unload
swapoff_all

echo
echo "== results: median of $rounds rounds, seconds; ratio = adaptive / whole"
awk "$BENCH_AWK"'
{
	k = $1 " " $2 " " $3
	tot[k] = tot[k] " " ($5 + $6); po[k] = po[k] " " $6
	pswp[k] += $7; thp[k] += $8; nthp[k] += $9; n[k]++
}
END {
	row("swap\tcase\tpolicy\ttime s\tpageout s\tpswpout\tthp_swpout\tTHPs\tratio (time / pageout)")
	split("zram disk", devs, " "); split("best worst", cases, " "); split("whole adaptive", pols, " ")
	for (d = 1; d <= 2; d++) for (c = 1; c <= 2; c++) {
		w = devs[d] " " cases[c] " whole"; a = devs[d] " " cases[c] " adaptive"
		for (p = 1; p <= 2; p++) {
			k = devs[d] " " cases[c] " " pols[p]
			t = median(tot[k]); o = median(po[k])
			ratio = "-"
			if (pols[p] == "adaptive")
				ratio = sprintf("%.3fx / %.3fx", t / median(tot[w]), o / median(po[w]))
			row(sprintf("%s\t%s\t%s\t%.3f\t%.3f\t%d\t%d\t%d\t%s", devs[d], cases[c], pols[p], t, o,
				pswp[k] / n[k], thp[k] / n[k], nthp[k] / n[k], ratio))
		}
		r[devs[d] " " cases[c]] = median(tot[a]) / median(tot[w])
		rp[devs[d] " " cases[c]] = median(po[a]) / median(po[w])
	}
	printf "(ratio: time / pageout alone; vmstat columns: mean per round)\n\n"
	printf "goals (time, pageout alone): best case zram <= 0.5x: %s (%.3fx, %.3fx); best case disk <= 0.1x: %s (%.3fx, %.3fx)\n",
		(r["zram best"] <= 0.5 ? "met" : "NOT met"), r["zram best"], rp["zram best"],
		(r["disk best"] <= 0.1 ? "met" : "NOT met"), r["disk best"], rp["disk best"]
	printf "worst case <= 1.02x: zram %s (%.3fx, %.3fx), disk %s (%.3fx, %.3fx)\n",
		(r["zram worst"] <= 1.02 ? "met" : "NOT met"), r["zram worst"], rp["zram worst"],
		(r["disk worst"] <= 1.02 ? "met" : "NOT met"), r["disk worst"], rp["disk worst"]
}' "$results"

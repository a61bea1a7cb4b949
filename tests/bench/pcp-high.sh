# PCP high auto-tuning (issue 4): two allocation-heavy workloads, three
# configurations in one boot, rounds interleaved so that drift in the host
# hits all three alike:
#   stock    mmtune loaded, pcp_high enabled=0: the hooks are off
#   observe  enabled=1 observe=1: stock decisions, counted (refills, drains)
#   tuned    enabled=1 observe=0: the tuner moves high within its bounds
# Workloads, both vCPUs:
#   fault    2 threads map 32 MiB (4K pages), touch every page, unmap, loop
#            (a region is larger than the static high, ~7000 pages here)
#   fork     2 workers fork children that touch 1 MiB and exit, loop
# Then how long the PCP memory takes to return to stock once idle.
# Guest side; run it with tests/bench/run.sh pcp-high.
. /lib.sh
. "$(dirname "$0")/lib-bench.sh"
secs=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}

echo "== pcp-high: $(bench_machine); ${secs}s per run, $rounds rounds"
insmod "$MMTUNE_KO" || bench_failed "insmod"
# Pages held on pagesets, all zones and CPUs.
pcp_pages() { awk '$1 == "count:" { s += $2 } END { print s }' /proc/zoneinfo; }
sleep 2
idle_pages=$(pcp_pages)
mmtune_pcp zones

setup() {
	case $1 in
	stock) echo 0 >"$MMTUNE_PCP/enabled"; echo 0 >"$MMTUNE_PCP/observe" ;;
	observe) echo 1 >"$MMTUNE_PCP/observe"; echo 1 >"$MMTUNE_PCP/enabled" ;;
	tuned) echo 0 >"$MMTUNE_PCP/observe"; echo 1 >"$MMTUNE_PCP/enabled" ;;
	esac || bench_failed "setup $1"
}

# run CONFIG WORKLOAD ROUND: one timed run, one line of results.
run() {
	setup "$1"
	case $2 in
	fault) cmd="pcp_churn fault --threads 2 --mib 32 --seconds $secs" ;;
	fork) cmd="pcp_churn fork --threads 2 --mib 1 --seconds $secs" ;;
	esac
	r0=$(mmtune_pcp refill_calls) d0=$(mmtune_pcp drains) a0=$(pgalloc_total)
	out=$($cmd) || bench_failed "$1 $2 round $3: $out"
	r1=$(mmtune_pcp refill_calls) d1=$(mmtune_pcp drains) a1=$(pgalloc_total)
	rate=$(bench_value rate "$out")
	echo "$1 $2 round $3: $out allocs=$((a1 - a0)) refills=$((r1 - r0)) drains=$((d1 - d0)) pcp_pages=$(pcp_pages)"
	echo "$1 $2 $3 $rate $((a1 - a0)) $((r1 - r0)) $((d1 - d0))" >>"$results"
}

round() {
	for w in fault fork; do
		for config in stock observe tuned; do
			run $config $w $1
		done
	done
}
bench_rounds round

# Decay: the tuner was on last; wait for every high back at high_min and
# the PCP memory back to what it held idle without tuning.
mmtune_pcp zones
peak=$(pcp_pages)
start=$(cut -d' ' -f1 /proc/uptime)
decay_s=timeout
for i in $(seq 1 120); do
	# Stock holds up to the static high (high_min) per CPU, so that is
	# the stock level of PCP memory.
	if [ "$(pcp_zone high_max)" -le "$(pcp_zone bmin)" ] && [ "$(pcp_zone count_max)" -le "$(pcp_zone bmin)" ]; then
		decay_s=$(awk -v s="$start" -v e="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.0f", e - s }')
		break
	fi
	pcp_poke_cpus
	sleep 1
done
mmtune_pcp zones
decays=$(mmtune_pcp decays) raises=$(mmtune_pcp raises) lowers=$(mmtune_pcp lowers) free_high=$(mmtune_pcp free_high)
rmmod mmtune

echo
echo "== results: median of $rounds rounds; rate = ops per second (fault: 32 MiB regions mapped, touched and unmapped; fork: children)"
awk -v peak="$peak" -v idle="$idle_pages" -v decay="$decay_s" "$BENCH_AWK"'
{
	k = $2 " " $1	# workload config
	rate[k] = rate[k] " " $4; al[k] += $5; rf[k] += $6; dr[k] += $7
}
END {
	row("workload\tconfig\tops/s\tvs stock\trefills/1000 allocs\tdrains/1000 allocs")
	split("fault fork", ws, " "); split("stock observe tuned", cs, " ")
	for (i = 1; i <= 2; i++) for (j = 1; j <= 3; j++) {
		k = cs[j]; w = ws[i]; m[w, k] = median(rate[w " " k])
		rpk[w, k] = al[w " " k] ? 1000 * rf[w " " k] / al[w " " k] : 0
		dpk[w, k] = al[w " " k] ? 1000 * dr[w " " k] / al[w " " k] : 0
		row(sprintf("%s\t%s\t%.2f\t%.3fx\t%s\t%s", w, k, m[w, k], m[w, "stock"] ? m[w, k] / m[w, "stock"] : 0,
			(k == "stock" ? "-" : sprintf("%.3f", rpk[w, k])), (k == "stock" ? "-" : sprintf("%.3f", dpk[w, k]))))
	}
	printf "(refills and drains are counted by the hooks: none with the hooks off; observe counts the stock decisions)\n"
	for (i = 1; i <= 2; i++) {
		w = ws[i]
		printf "%s: tuned/stock throughput %.3fx (goal >= 1.05: %s); refills per 1000 allocs tuned/observe %.3fx (goal <= 0.2: %s); drains %.3fx\n",
			w, m[w, "stock"] ? m[w, "tuned"] / m[w, "stock"] : 0, (m[w, "tuned"] >= 1.05 * m[w, "stock"] ? "met" : "NOT met"),
			rpk[w, "observe"] ? rpk[w, "tuned"] / rpk[w, "observe"] : 0,
			(rpk[w, "tuned"] <= 0.2 * rpk[w, "observe"] ? "met" : "NOT met"),
			dpk[w, "observe"] ? dpk[w, "tuned"] / dpk[w, "observe"] : 0
	}
	printf "PCP memory: %d pages idle (stock), %d after the last tuned run; back to high_min and stock level in %s s (goal: within the 60 s decay time: %s)\n",
		idle, peak, decay, (decay != "timeout" && decay <= 60 ? "met" : "NOT met")
}' "$results"
echo "counters over the run: raises $raises lowers $lowers decays $decays free_high $free_high"

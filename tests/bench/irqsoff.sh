# Issue 26, item 2: the longest interrupts-off section during munmap() of
# 1 GiB of swapped-out memory, the kernel's own swap slot cache (64 slots
# per CPU) against mmtune's at cache_size 1024. Goal: mmtune at 1024 no
# worse than stock. Configurations, rounds interleaved:
#   stock         mmtune not loaded: the kernel's slot cache (64 per CPU)
#   mmtune-64     mmtune's cache at 64 slots per CPU
#   mmtune-1024   ... at 1024 (the largest cache_size)
#   unfixed-1024  ... at 1024 with the free hook as it was before the fix
#                 (irqsoff-unfixed.patch: the whole free side flushed under
#                 its lock, interrupts off)
# Each run: munmap_swapped (tests/vm/progs) maps 1 GiB in 4K pages in a
# memcg with memory.max=64M, writes every page, MADV_PAGEOUTs the rest,
# then munmap()s it, so that zap_pte_range() frees 262144 swap entries
# through free_swap_and_cache() and the slot cache's free side. Swap: the
# virtio disk (an SSD to the guest), zswap off. Cases, each with tracing on
# for the munmap() only (tracing_max_latency reset before it):
#   irqsoff         the irqsoff tracer's maximum (the goal's measure)
#   irqsoff-pcpmin  the same with vm.percpu_pagelist_high_fraction at its
#                   largest effect (pcp high 4 x batch): the page
#                   allocator's bulk frees under zone->lock, which set the
#                   maximum above, shrink to at most 3 x batch pages, so
#                   that shorter sections can show
#   preemptirqsoff  interrupts or preemption off: what a spinlock holder
#                   (the page-table lock zap_pte_range holds, the free
#                   side's lock) costs a task waiting for that CPU
#   wakeup          no tracer: a SCHED_FIFO thread of munmap_swapped wakes
#                   every 1000 us during the munmap() and measures how late
#                   it runs (cyclictest's measure): the scheduling latency
#                   the munmap() imposes under the default voluntary
#                   preemption, where zap_pte_range() yields the CPU
#                   between entries (need_resched) but never inside one
#                   entry's free, flush included
#   sites           no latency tracer: the preemptirq:irq_disable and
#                   irq_enable events of every section (x86-tsc clock, ns)
#                   and kprobe events at entry and return of the free
#                   sides, free_swap_slot() and mmtune's swap_slots_free():
#                   the longest section that began inside each (flushes
#                   included; interrupts that came in there not), and per function
#                   that turned interrupts off otherwise, so that the slot
#                   caches' own sections are measured whatever else is
#                   longer. Each event adds a few hundred ns to its
#                   section. (The events' parent field is 0 without frame
#                   pointers, so the kprobes say where a section began.)
# The tracer rounds run with options/function-trace off (the tracer then
# costs a few instructions per toggle); then one profile run per tracer
# case and configuration with function-trace on lists what its longest
# section executed (its latency is inflated by the tracing; only the
# function counts are the point).
#
# One vCPU and -icount shift=0,sleep=off: the guest's clock advances 1 ns
# per instruction executed, so a section's length is its instruction count
# (1 us = 1000 instructions), the same on a loaded host as on an idle one,
# and the rounds differ only where the guest's own state differs. A real
# CPU runs 1-4 instructions per ns, so real sections are shorter; the
# ratios between configurations are the result.
#
# Guest side; run it with tests/bench/run.sh irqsoff (make bench-irqsoff).
# BENCH_MIB, BENCH_ROUNDS, BENCH_SITES_ROUNDS, BENCH_PROFILE (0/1),
# BENCH_CASES, BENCH_CONFIGS on the kernel command line
# (MMTUNE_VM_APPEND) change the defaults below.
# kernel: bench-irqsoff
# module-patch: irqsoff-unfixed.patch
# smp: 1
# icount: shift=0,sleep=off
# timeout: 10800
. /lib.sh
. "$(dirname "$0")/lib-bench.sh"
mib=${BENCH_MIB:-1024}
limit=${BENCH_LIMIT_MIB:-64}
rounds=${BENCH_ROUNDS:-3}
sites_rounds=${BENCH_SITES_ROUNDS:-1}
profile=${BENCH_PROFILE:-1}
cases=${BENCH_CASES:-irqsoff irqsoff-pcpmin preemptirqsoff wakeup sites}
configs=${BENCH_CONFIGS:-stock mmtune-64 mmtune-1024 unfixed-1024}
UNFIXED_KO=/files/mmtune-irqsoff-unfixed.ko
T=/sys/kernel/tracing
PCPMIN_FRACTION=1000000
traces=/tmp/irqsoff
sites=/tmp/irqsoff/sites
wakeups=/tmp/irqsoff/wakeups
mkdir -p $traces
: >$sites
: >$wakeups

echo "== irqsoff: munmap() of $mib MiB of swapped-out anonymous memory (4K pages), memcg memory.max=${limit} MiB, $rounds rounds ($sites_rounds for sites)"
echo "== $(bench_machine), $(uname -r); swap: virtio disk (non-rotational), zswap off; configs: $configs; cases: $cases"
[ -e $T/current_tracer ] || mount -t tracefs tracefs $T || bench_failed "no tracefs"
for c in $cases; do
	case $c in
	sites) [ -d $T/events/preemptirq ] || bench_failed "no preemptirq events in this kernel" ;;
	wakeup) ;;
	*) grep -qw "${c%-pcpmin}" $T/available_tracers ||
		bench_failed "tracer ${c%-pcpmin} not in this kernel ($(cat $T/available_tracers))" ;;
	esac
done
# pcp_high CPU: the per-CPU page list high of DMA32 (all of the guest's
# memory) on that CPU.
pcp_high() {
	awk -v cpu="$1" '/^Node .* zone/ { z = $4 } z == "DMA32" && $1 == "cpu:" { c = $2 }
		z == "DMA32" && c == cpu && $1 == "high:" { print $2; exit }' /proc/zoneinfo
}
echo $PCPMIN_FRACTION >/proc/sys/vm/percpu_pagelist_high_fraction
pcpmin_high=$(pcp_high 0)
echo 0 >/proc/sys/vm/percpu_pagelist_high_fraction
echo "== pcp high of DMA32 on cpu0: $(pcp_high 0) pages by default, $pcpmin_high in the -pcpmin case (vm.percpu_pagelist_high_fraction=$PCPMIN_FRACTION)"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
echo 0 >$T/tracing_on

# setup CONFIG CASE: swap, the slot cache, the pcp lists and the trace
# buffer as the configuration and the case want them.
setup() {
	bench_unload
	case $2 in
	*-pcpmin) echo $PCPMIN_FRACTION >/proc/sys/vm/percpu_pagelist_high_fraction ;;
	*) echo 0 >/proc/sys/vm/percpu_pagelist_high_fraction ;;
	esac
	swapoff_all
	echo 0 >/sys/module/zswap/parameters/enabled
	echo 0 >/sys/block/vda/queue/rotational
	if ! mkswap /dev/vda >/dev/null || ! swapon /dev/vda; then
		bench_failed "swap on /dev/vda"
	fi
	case $1 in
	mmtune-*|unfixed-*)
		ko=$MMTUNE_KO
		case $1 in unfixed-*) ko=$UNFIXED_KO ;; esac
		if ! insmod "$ko" || ! echo "${1#*-}" >"$MMTUNE_SLOTS/cache_size" ||
			! echo 1 >"$MMTUNE_SLOTS/enabled"; then
			bench_failed "mmtune for $1"
		fi
		;;
	esac
	# Room for every event of a munmap() (about 14 per page, 20 bytes
	# each), or for the profile runs' longest sections.
	case $2 in
	sites)
		# No latency tracer: the snapshot buffer is not needed.
		echo 0 >$T/snapshot
		echo 262144 >$T/buffer_size_kb
		echo x86-tsc >$T/trace_clock
		;;
	*) echo 32768 >$T/buffer_size_kb; echo local >$T/trace_clock ;;
	esac
	echo >$T/trace
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# trace_sites FILE: "started at X, ended at Y" of a latency trace.
trace_sites() {
	sed -n 's/^#  => started at: *\(.*\)/\1/p; s/^#  => ended at: *\(.*\)/\1/p' "$1" |
		paste -sd' ' | awk '{ print "started at " $1 ", ended at " $2 }'
}

# The kprobe events of the sites case: entry and return of the free sides.
sites_probes() {
	if ! echo "p:irqsoff/fss_in free_swap_slot" >>$T/kprobe_events ||
		! echo "r:irqsoff/fss_out free_swap_slot" >>$T/kprobe_events; then
		bench_failed "kprobe on free_swap_slot"
	fi
	if grep -q "^mmtune " /proc/modules && { ! echo "p:irqsoff/ssf_in mmtune:swap_slots_free" >>$T/kprobe_events ||
		! echo "r:irqsoff/ssf_out mmtune:swap_slots_free" >>$T/kprobe_events; }; then
		bench_failed "kprobe on mmtune:swap_slots_free"
	fi
}

# site_sections: from the events in the trace, "SITE LONGEST_NS SECTIONS
# END_OF_LONGEST" per site: free_swap_slot or swap_slots_free for a section
# that began inside that function (outside interrupt context: the h/s
# flags), else the function that turned interrupts off (the caller of
# local_irq_disable/save, or the lock function for spin_lock_irq*).
site_sections() {
	awk 'function fn(s) { sub(/^(caller|parent)=/, "", s); sub(/\+.*/, "", s); return s }
	!/^#/ {
		ev = ""; c = ""
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^(irq_disable|irq_enable|fss_in|fss_out|ssf_in|ssf_out):$/) {
				ev = $i; ts = $(i - 1); sub(/:$/, "", ts); fl = $(i - 2)
			} else if ($i ~ /^caller=/) c = fn($i)
		}
		if (ev == "fss_in:") { fss = 1; next }
		if (ev == "fss_out:") { fss = 0; next }
		if (ev == "ssf_in:") { ssf = 1; next }
		if (ev == "ssf_out:") { ssf = 0; next }
		if (ev == "") next
		site = c
		# An interrupt that came in there is not the free side own:
		# irqentry_enter turns the trace state off before the hardirq
		# count (the h flag) goes up.
		irq = fl ~ /[hHs]/ || c ~ /^(irqentry_|exc_|sysvec_|asm_|common_interrupt)/
		if (!irq && ssf) site = "swap_slots_free"
		else if (!irq && fss) site = "free_swap_slot"
		if (ev == "irq_disable:") { st = ts; ss = site; next }
		if (st == "") next
		d = ts - st; st = ""; n[ss]++
		if (d > mx[ss]) { mx[ss] = d; end[ss] = c }
	}
	END { for (s in mx) printf "%s %d %d %s\n", s, mx[s], n[s], end[s] }' $T/trace
}

# run CONFIG CASE ROUND [profile]: one munmap, one line of results.
run() {
	setup "$1" "$2"
	wake=
	if [ "$2" = wakeup ]; then
		echo nop >$T/current_tracer
		wake="--wakeup-us 1000"
	elif [ "$2" = sites ]; then
		echo nop >$T/current_tracer
		sites_probes
		echo 1 >$T/events/irqsoff/enable
		echo 1 >$T/events/preemptirq/irq_disable/enable
		echo 1 >$T/events/preemptirq/irq_enable/enable
	else
		echo "${2%-pcpmin}" >$T/current_tracer
		if [ "${4:-}" = profile ]; then
			echo 1 >$T/options/function-trace
		else
			echo 0 >$T/options/function-trace
		fi
	fi
	# shellcheck disable=SC2086 # $wake is empty or two words
	bench_in_memcg "$limit" munmap_swapped --size "$mib" --tracing $T $wake ||
		bench_failed "$1 $2 round $3: $out"
	lat=$(bench_value max_latency_us "$out") us=$(bench_value munmap_us "$out")
	[ "$2" != wakeup ] || lat=$(bench_value wakeup_max_us "$out")
	c="-"
	if [ -d "$MMTUNE_SLOTS" ]; then
		c="free=$(slots free) flush=$(slots flush) flush_slots=$(slots flush_slots)"
	fi
	if [ "$2" = sites ]; then
		echo 0 >$T/events/preemptirq/irq_disable/enable
		echo 0 >$T/events/preemptirq/irq_enable/enable
		echo 0 >$T/events/irqsoff/enable
		site_sections | sed "s/^/$1 $3 /" >>$sites
		echo "$1 $2 round $3: $out; $(awk -v k="$1 $3" '$1 " " $2 == k { n += $5 } END { print n + 0 }' $sites) sections, $(awk '/^entries:|^overrun:/ { printf "%s %s ", $1, $2 }' $T/per_cpu/cpu0/stats); slot cache: $c"
	elif [ "$2" = wakeup ]; then
		echo "$1 $2 round $3: $out; slot cache: $c"
		echo "$2 $1 $3 $lat $us" >>"$results"
		echo "$1 $3 $(bench_value wakeup_median_us "$out") $(bench_value wakeup_p90_us "$out") $(bench_value wakeup_p99_us "$out") $lat $(bench_value wakeups "$out")" >>$wakeups
	else
		f=$traces/$2-$1-$3${4:+-$4}
		cp $T/trace "$f"
		echo "$1 $2 round $3${4:+ ($4)}: $out; $(trace_sites "$f"); slot cache: $c"
		[ -n "${4:-}" ] || echo "$2 $1 $3 $lat $us" >>"$results"
		echo nop >$T/current_tracer
	fi
	echo >$T/trace
	[ "$2" != sites ] || echo >$T/kprobe_events
}

round() {
	for t in $cases; do
		[ "$t" != sites ] || [ "$1" -le "$sites_rounds" ] || continue
		for config in $configs; do run "$config" "$t" "$1"; done
	done
}
[ "$sites_rounds" -le "$rounds" ] || rounds=$sites_rounds
bench_rounds round
if [ "$profile" = 1 ]; then
	for t in $cases; do
		case $t in sites|wakeup) continue ;; esac
		for config in $configs; do run "$config" "$t" 0 profile; done
	done
fi
bench_unload
swapoff_all
echo 0 >/proc/sys/vm/percpu_pagelist_high_fraction
echo 1408 >$T/buffer_size_kb

echo
echo "== results: the longest section during munmap() (wakeup: the latest wakeup), us of guest time (1 ns per instruction), max and median of the rounds"
awk "$BENCH_AWK"'
{ key = $1 " " $2; lat[key] = lat[key] " " $4; us[key] = us[key] " " $5; if ($4 + 0 >= top[key] + 0) { top[key] = $4; at[key] = $3 } }
END {
	nt = split("'"$cases"'", tr, " "); nc = split("'"$configs"'", cf, " ")
	row("case\tconfig\tmax us\tmedian us\trange us\tmunmap ms\tmax vs stock")
	for (i = 1; i <= nt; i++) for (j = 1; j <= nc; j++) {
		k = tr[i] " " cf[j]
		if (!(k in lat)) continue
		n = split(lat[k], a, " "); mx = 0; for (x = 1; x <= n; x++) if (a[x] + 0 > mx) mx = a[x] + 0
		s = tr[i] " stock"; split(lat[s], b, " "); smx = 0; for (x in b) if (b[x] + 0 > smx) smx = b[x] + 0
		row(sprintf("%s\t%s\t%d\t%d\t%s\t%.1f\t%s", tr[i], cf[j], mx, median(lat[k]), range(lat[k]),
			median(us[k]) / 1000, (s in lat && smx > 0) ? sprintf("%.2fx", mx / smx) : "-"))
		max[k] = mx
	}
	printf "(munmap ms: median time of the whole munmap(), guest time; -pcpmin: vm.percpu_pagelist_high_fraction='$PCPMIN_FRACTION')\n\n"
	for (i = 1; i <= nt; i++) {
		k = tr[i] " mmtune-1024"; s = tr[i] " stock"
		if (!(k in max) || !(s in max)) continue
		if (tr[i] ~ /^irqsoff/)
			printf "goal (issue 26, item 2), %s: max at cache_size 1024 <= stock: %s (%d us vs %d us)\n",
				tr[i], max[k] <= max[s] ? "met" : "NOT met", max[k], max[s]
		else
			printf "%s (no goal set): max at cache_size 1024 %s stock (%d us vs %d us, %.2fx)\n",
				tr[i], max[k] <= max[s] ? "<=" : ">", max[k], max[s], max[k] / max[s]
	}
	for (k in at) print "worst " k " " at[k] > "/tmp/irqsoff/worst"
}' "$results"

# The wakeup case: the distribution, not only the maximum (which the page
# allocator's bulk frees may set in any configuration).
if [ -s $wakeups ]; then
	echo
	echo "== wakeup: how late the SCHED_FIFO thread ran (us; every 1000 us during the munmap()), median over the rounds of each round's percentile"
	awk "$BENCH_AWK"'
	{ p50[$1] = p50[$1] " " $3; p90[$1] = p90[$1] " " $4; p99[$1] = p99[$1] " " $5; mx[$1] = mx[$1] " " $6; n[$1] = n[$1] " " $7 }
	END {
		nc = split("'"$configs"'", cf, " ")
		printf "%-13s %9s %9s %9s %12s %9s\n", "config", "median", "p90", "p99", "max (range)", "wakeups"
		for (j = 1; j <= nc; j++) {
			c = cf[j]
			if (!(c in mx)) continue
			printf "%-13s %9.1f %9.1f %9.1f %12s %9d\n", c, median(p50[c]), median(p90[c]), median(p99[c]), range(mx[c]), median(n[c])
		}
	}' $wakeups
fi

# The sites case: the slot cache's own sections beside the longest of all.
if [ -s $sites ]; then
	echo
	echo "== sites: interrupts-off sections that began inside each free side, and the longest of all, us (x86-tsc: 1 cycle = 1 ns of guest time), longest of $sites_rounds round(s)"
	awk '
	{ k = $1 " " $3; if ($4 > mx[k]) { mx[k] = $4; end[k] = $6 } n[k] += $5; cfg[$1] = 1
	  if ($4 > all[$1]) { all[$1] = $4; allsite[$1] = $3 " -> " $6 } }
	END {
		nc = split("'"$configs"'", cf, " ")
		printf "%-13s %26s %26s   %s\n", "config", "free_swap_slot (sections)", "swap_slots_free (sections)", "longest of all: site -> ended in"
		for (j = 1; j <= nc; j++) {
			c = cf[j]
			if (!(c in cfg)) continue
			printf "%-13s", c
			split("free_swap_slot swap_slots_free", s, " ")
			for (i = 1; i <= 2; i++) {
				k = c " " s[i]
				printf " %26s", (k in mx) ? sprintf("%.1f (%d)", mx[k] / 1000, n[k]) : "-"
			}
			printf "   %.1f %s\n", all[c] / 1000, allsite[c]
		}
	}' $sites
	for config in $configs; do
		echo "-- $config: the 8 sites with the longest sections (us, sections, where the longest ended)"
		awk -v c="$config" '$1 == c { k = $3; if ($4 > mx[k]) { mx[k] = $4; end[k] = $6 } n[k] += $5 }
			END { for (k in mx) printf "%10.1f %8d %s -> %s\n", mx[k] / 1000, n[k], k, end[k] }' $sites |
			sort -rn | head -n 8
	done
fi

# Where each maximum came from: the trace of the worst round (started and
# ended at, the stack where it ended), then the profile runs' function
# counts inside their longest section.
echo
echo "== traces of the worst round of each case and configuration"
for t in $cases; do
	for config in $configs; do
		r=$(awk -v k="$t $config" '$2 " " $3 == k { print $4 }' $traces/worst 2>/dev/null)
		[ -n "$r" ] && [ -f "$traces/$t-$config-$r" ] || continue
		echo "-- $t $config, round $r: $(trace_sites "$traces/$t-$config-$r")"
		grep -E '^# latency:|^ => ' "$traces/$t-$config-$r" | head -n 24
	done
done
if [ "$profile" = 1 ]; then
	echo
	echo "== profile runs (function-trace on; latencies inflated by the tracing): calls inside the longest section"
	for t in $cases; do
		for config in $configs; do
			f=$traces/$t-$config-0-profile
			[ -f "$f" ] || continue
			echo "-- $t $config: $(sed -n 's/^# latency: \([0-9]*\) us, #\([0-9/]*\).*/\1 us, entries shown\/recorded \2/p' "$f"), $(trace_sites "$f")"
			awk '!/^#/ && /[0-9]us[^:]*: / { s = $0; sub(/^.*[0-9]us[^:]*: /, "", s); sub(/ <-.*/, "", s); if (s !~ /^</) n[s]++ }
				END { for (f in n) print n[f], f }' "$f" | sort -rn | head -n 14 | awk '{ printf "  %7d %s\n", $1, $2 }'
		done
	done
fi

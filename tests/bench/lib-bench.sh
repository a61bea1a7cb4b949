# Helpers shared by the benchmarks: sourced by their guest sides (after
# /lib.sh) and by tests/bench/run.sh on the host. Not a benchmark itself;
# it is a *.sh so that tests/vm/run.sh copies it to /bench in the guest.
results=/tmp/bench.results

# A run that breaks fails the benchmark (the guest's init reads the file).
bench_failed() { echo "BENCH FAILED: $*"; touch /tmp/demo-failed; }

# For the banner: "2 vCPUs (TCG), 1987 MiB".
bench_machine() { echo "$(nproc) vCPUs (TCG), $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"; }

# The virtio swap disk's throttle (a "# disk-bps: N" line, see run.sh).
bench_disk_limit() {
	if [ "${MMTUNE_DISK_BPS:-0}" != 0 ]; then
		echo "$((MMTUNE_DISK_BPS / 1048576)) MiB/s (qemu throttling.bps-total)"
	else
		echo unthrottled
	fi
}

bench_unload() { grep -q "^mmtune " /proc/modules && rmmod mmtune; }

# bench_rounds FN: empty the results, then FN 1, FN 2, ... FN $rounds. FN
# runs every configuration once, so that drift in the host hits all alike.
bench_rounds() {
	: >"$results"
	bench_round=1
	while [ $bench_round -le "$rounds" ]; do
		"$1" $bench_round
		bench_round=$((bench_round + 1))
	done
}

# bench_in_memcg LIMIT_MIB CMD...: run CMD in the memcg "bench" with
# memory.max=LIMIT_MIB MiB, its output in $out; returns CMD's status.
bench_in_memcg() {
	mkdir -p /sys/fs/cgroup/bench
	echo "${1}M" >/sys/fs/cgroup/bench/memory.max &&
		echo $$ >/sys/fs/cgroup/bench/cgroup.procs || bench_failed "memcg set-up"
	shift
	bench_rc=0
	out=$("$@") || bench_rc=$?
	echo $$ >/sys/fs/cgroup/cgroup.procs
	rmdir /sys/fs/cgroup/bench
	return $bench_rc
}

# bench_value KEY LINE: the number after " KEY=" in a program's result line.
bench_value() { echo "$2" | sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

# bench_mbps lz4|zstd -bN ... FILE: the speed its benchmark mode reports.
bench_mbps() { "$@" 2>&1 | tr '\r' '\n' | grep 'MB/s' | tail -n 1 | sed -n 's/.*), *\([0-9.]*\) MB\/s.*/\1/p'; }

# Awk functions for the reports: awk "$BENCH_AWK"'...program...'.
# median and range of a space-separated list of numbers; row(CELLS): one
# row of the benchmark's result table, its cells tab-separated (the header
# row first), printed aligned and as a "result:" line, which run.sh writes
# to results/bench-NAME-LINE.tsv.
BENCH_AWK='
function row(cells,   a, n, i, line) {
	print "result:\t" cells
	n = split(cells, a, "\t")
	for (i = 1; i <= n; i++) line = line sprintf(i == 1 ? "%-15s" : " %13s", a[i])
	print line
}
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) a[i] += 0	# numbers, not strings, from here on
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function range(list,   a, n, i, lo, hi) {
	n = split(list, a, " "); lo = hi = a[1] + 0
	for (i = 2; i <= n; i++) { if (a[i] + 0 < lo) lo = a[i] + 0; if (a[i] + 0 > hi) hi = a[i] + 0 }
	return lo "-" hi
}
# Throughput benchmarks (rows "CONFIG ROUND MB/s SYS-SECONDS ..."):
# add_round() keeps the MB/s and sys seconds of the row in mb[] and sys[]
# and counts it in n[]; medians(CONFIGS) sets order[] to CONFIGS (space
# separated), m[] and s[] to the median MB/s and sys seconds of each, and
# returns how many configurations there are.
function add_round() { mb[$1] = mb[$1] " " $3; sys[$1] = sys[$1] " " $4; n[$1]++ }
function medians(configs,   nc, i, c) {
	nc = split(configs, order, " ")
	for (i = 1; i <= nc; i++) { c = order[i]; m[c] = median(mb[c]) + 0; s[c] = median(sys[c]) + 0 }
	return nc
}
'
# bench_mbps_header ROUNDS: the results line of the throughput benchmarks.
bench_mbps_header() {
	echo
	echo "== results: median of $1 rounds; MB/s = 10^6 bytes written per second of wall time"
}

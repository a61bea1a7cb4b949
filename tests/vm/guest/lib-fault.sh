# Guest test helpers for fault injection (the debug kernel: FAILSLAB,
# FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS). Sourced by lib.sh.
# --- failslab, fail_page_alloc, mmtune's fail_mmtune_slots_refill ---------
FAILSLAB=/sys/kernel/debug/failslab
FAIL_PAGE_ALLOC=/sys/kernel/debug/fail_page_alloc
FAIL_REFILL=/sys/kernel/debug/fail_mmtune_slots_refill

# fault_require: skip (exit 4) on a kernel without fault injection, as
# the normal test kernel is; "make check-debug" runs the debug kernel.
fault_require() {
	[ -d $FAILSLAB ] && [ -d $FAIL_PAGE_ALLOC ] && [ -e /proc/self/make-it-fail ] &&
		[ -e /proc/thread-self/fail-nth ] ||
		skip "kernel without fault injection (FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS: the debug kernel, make check-debug)"
}

# fault_attr_reset DIR: one fault attribute back to its boot defaults, but
# silent (verbose 0: "FAULT_INJECTION: forcing a failure" with a stack
# would be a "Call Trace:" on the console, which fails the run).
fault_attr_reset() {
	[ -d "$1" ] || return 0
	echo 0 >"$1/probability"
	echo 1 >"$1/interval"
	echo 1 >"$1/times"
	echo 0 >"$1/space"
	echo 0 >"$1/verbose"
	echo N >"$1/task-filter"
}

# fault_reset: every fault attribute off; failslab and fail_page_alloc's
# own filters at their defaults.
fault_reset() {
	fault_attr_reset $FAILSLAB
	fault_attr_reset $FAIL_PAGE_ALLOC
	fault_attr_reset $FAIL_REFILL
	echo Y >$FAILSLAB/ignore-gfp-wait
	echo N >$FAILSLAB/cache-filter
	echo Y >$FAIL_PAGE_ALLOC/ignore-gfp-wait
	echo Y >$FAIL_PAGE_ALLOC/ignore-gfp-highmem
	echo 1 >$FAIL_PAGE_ALLOC/min-order
}

# The reports tests/vm/run.sh fails a run on, but "Call Trace:": an
# allocation that fails on purpose may print a stack (warn_alloc: "page
# allocation failure", "vmalloc error") and that is not a defect.
FAULT_REPORT_RE='WARNING:|BUG:|Oops|Kernel panic|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|detected stalls|self-detected stall|KASAN|UBSAN|kmemleak: .*suspected memory leak'

# fault_quiet_begin: while failures are injected, the console gets only
# KERN_ERR and worse (KASAN and BUG reports still reach it), and a
# marker starts the part of the kernel log fault_check_log scans.
# fault_quiet_end restores the console (so does the runner's cleanup).
fault_quiet_begin() {
	# Unique in the whole boot (uptime and this test's PID): each test
	# counted from 1, and an earlier test's marker widened the scan to
	# its reports.
	_fault_mark="$(cut -d' ' -f1 /proc/uptime)-$$"
	echo "mmtune-test: fault injection $_fault_mark begins" >/dev/kmsg
	echo 4 >/proc/sys/kernel/printk
}
fault_quiet_end() {
	echo 7 >/proc/sys/kernel/printk
	echo "mmtune-test: fault injection $_fault_mark ends" >/dev/kmsg
}

# fault_check_log: fails on any report of FAULT_REPORT_RE in the kernel log
# since the last fault_quiet_begin (the log shows it though the console
# did not). The marker must still be in the log: else it overflowed.
fault_check_log() {
	dmesg >/tmp/fault.log
	grep -q "mmtune-test: fault injection $_fault_mark begins" /tmp/fault.log ||
		fail "the kernel log lost the marker of fault injection $_fault_mark (overflow): cannot check it"
	sed -n "/mmtune-test: fault injection $_fault_mark begins/,\$p" /tmp/fault.log >/tmp/fault.part
	if grep -Eq "$FAULT_REPORT_RE" /tmp/fault.part; then
		echo 7 >/proc/sys/kernel/printk
		cat /tmp/fault.part
		fail "kernel report while failures were injected: $(grep -E "$FAULT_REPORT_RE" /tmp/fault.part | head -n 1)"
	fi
}

# kmemleak_begin / kmemleak_check WHAT: no object that kmemleak finds
# unreferenced after kmemleak_begin was not already so before it (an
# earlier test's leak is kmemleak-scan's to report, not this test's). No-ops
# on a kernel without kmemleak.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_list() { awk '/^unreferenced object/ { print $3 }' $KMEMLEAK; }
kmemleak_begin() {
	[ -e $KMEMLEAK ] || return 0
	echo scan >$KMEMLEAK || fail "kmemleak scan"
	{ echo none; kmemleak_list; } >/tmp/kmemleak.before
}
kmemleak_check() {
	[ -e $KMEMLEAK ] || { info "no kmemleak in this kernel: leak check skipped"; return 0; }
	# An object must be older than 5 s to be reported; the second scan
	# confirms.
	sleep 6
	echo scan >$KMEMLEAK || fail "kmemleak scan"
	echo scan >$KMEMLEAK || fail "kmemleak scan"
	kmemleak_list | grep -vxF -f /tmp/kmemleak.before >/tmp/kmemleak.new
	if [ -s /tmp/kmemleak.new ]; then
		cat $KMEMLEAK
		fail "$1: kmemleak: $(wc -l </tmp/kmemleak.new) new unreferenced object(s): $(tr '\n' ' ' </tmp/kmemleak.new)"
	fi
	info "ok: $1: kmemleak finds no new unreferenced object"
}

# fault_arm DIR PROBABILITY [INTERVAL]: fail that share of the calls (every
# INTERVALth one only) of the tasks with make-it-fail set (task-filter),
# at most FAULT_TIMES times; fault_injected DIR: how many failed since.
FAULT_TIMES=1000000
fault_arm() {
	echo Y >"$1/task-filter"
	echo $FAULT_TIMES >"$1/times"
	echo "${3:-1}" >"$1/interval"
	echo "$2" >"$1/probability"
}
fault_injected() { echo $(( FAULT_TIMES - $(cat "$1/times") )); }

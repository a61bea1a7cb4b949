#!/bin/sh
# REPRODUCER of a qemu TCG bug, not in make check (issue 14, swap_slots-rmmod).
# No mmtune here: a stock 6.1 kernel, two swap writers under memory.max and a
# CPU hog per vCPU, and stock static keys flipped again and again (the
# kmem/mm_page_alloc and mm_page_free tracepoints, whose sites run on every
# page allocation and free). With "-accel tcg,thread=multi" (qemu 7.2) a vCPU
# may keep a stale translation of a patched site: it traps on an int3 that is
# no longer in memory, the kprobes int3 handler sees no int3 at the address
# and restarts the instruction, forever. Measured 2026-11-23 on the test
# kernel: the guest stopped after 600 s (no more console or TAP output, its
# own watchdog and sysrq silent); the QMP registers put one vCPU in
# kprobe_int3_handler+0x3d and the other in __schedule (KASLR offset found
# from the two RIPs). In swap_slots-rmmod and swap_slots-switch-race with mmtune the same loop showed as soft
# lockups at the static-key site with the Code: line already showing the
# new instruction. Run it with
#   cp tests/vm/repro/repro-*.sh tests/vm/tests/
#   MMTUNE_VM_TCG_THREAD=multi tests/vm/run.sh --tests 'repro-*'
# With the runner's default (thread=single) it passed: 275 cycles (1100
# key switches) in its 480 s, every byte equal, on the same loaded host.
# timeout: 900
. /lib.sh
swapon_zram 1G
slots_load_start
for c in 0 1; do taskset -c $c sh -c 'while [ ! -e /tmp/load/stop ]; do :; done' & done
ev=/sys/kernel/debug/tracing/events/kmem
[ -w $ev/mm_page_alloc/enable ] || fail "no kmem tracepoints in tracefs"
# Flip for 480 s: under thread=multi the guest stopped within 600 s.
end=$(( $(date +%s) + 480 ))
i=0
while [ "$(date +%s)" -lt $end ]; do
	i=$((i + 1))
	for e in mm_page_alloc mm_page_free; do
		echo 1 >$ev/$e/enable || fail "cycle $i: enable $e"
		echo 0 >$ev/$e/enable || fail "cycle $i: disable $e"
	done
done
info "$i on/off cycles of two tracepoint keys under reclaim"
slots_load_stop
wait
swapoff /dev/zram0 || fail "swapoff"

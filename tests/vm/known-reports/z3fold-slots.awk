# Known stock report "z3fold-slots" (tests/vm/run.sh, MMTUNE_VM_KNOWN_REPORTS;
# both rows' known_reports): z3fold leaves handle slots allocated after
# every object was freed. 6.1 (debug kernel, mmtune not loaded): 64 MiB of
# 4K pages through zswap on z3fold and a swapoff left 13692 slots in use
# with nothing stored. 6.12 (test kernel, mmtune never loaded): 96 MiB
# with THPs and 64 MiB of 4K pages through zswap on z3fold three times, a
# swapoff and a zpool switch: the same report. zswap releases a pool only once it
# freed every entry (each holds a pool reference), so what is left then is
# z3fold's own bookkeeping, not an entry mmtune kept. When a zpool switch
# releases the pool, SLUB reports each slab that still has objects and
# kmem_cache_destroy() warns (6.12: "Objects remaining on", each slab's
# report with a __slab_err warning and its trace):
#   BUG z3fold_handle (...): Objects remaining in z3fold_handle on __kmem_cache_shutdown()
#   [6.12: WARNING: CPU: N PID: N at mm/slub.c:N __slab_err+...]
#   ... Call Trace: ... z3fold_zpool_destroy ...
#   kmem_cache_destroy z3fold_handle: Slab cache still has objects when called from z3fold_zpool_destroy+...
#   WARNING: CPU: N PID: N at mm/slab_common.c:... kmem_cache_destroy+...
#   ... Call Trace: ... ---[ end trace ... ]---
# Prints the console without the report lines of those blocks
# (every other line of a block, e.g. a KASAN or lockdep report that lands
# inside it, is still scanned); "known: N" on stderr.
/BUG z3fold_handle \(.*\): Objects remaining (in z3fold_handle )?on __kmem_cache_shutdown\(\)/ {
	inblock = 1; seen_destroy = 0; known++
	next
}
inblock && /kmem_cache_destroy z3fold_handle: Slab cache still has objects when called from z3fold_zpool_destroy/ {
	seen_destroy = 1
	next
}
inblock && /Call Trace:/ { next }
inblock && /WARNING: CPU: [0-9]+ PID: [0-9]+ at mm\/slub\.c:[0-9]+ __slab_err\+/ { next }
inblock && /WARNING: CPU: [0-9]+ PID: [0-9]+ at mm\/slab_common\.c:[0-9]+ kmem_cache_destroy\+/ { next }
inblock && seen_destroy && /---\[ end trace/ { inblock = 0; next }
{ print }
END { print "known: " known + 0 > "/dev/stderr" }

# Known stock report "z3fold-slots" (tests/vm/run.sh, MMTUNE_VM_KNOWN_REPORTS,
# the default of every run): z3fold leaves handle slots allocated after
# every object was freed. 6.1 (debug kernel, mmtune not loaded): 64 MiB of
# 4K pages through zswap on z3fold and a swapoff left 13692 slots in use
# with nothing stored. 6.12 on a loaded host: after zswap_large-rmmod's
# z3fold round, the next zpool switch. zswap releases a pool only once it
# freed every entry (each holds a pool reference), so what is left then is
# z3fold's own bookkeeping, not an entry mmtune kept. When a zpool switch
# releases the pool, SLUB reports each slab that still has objects and
# kmem_cache_destroy() warns:
#   BUG z3fold_handle (...): Objects remaining in z3fold_handle on __kmem_cache_shutdown()
#   ... Call Trace: ... z3fold_zpool_destroy ...
#   kmem_cache_destroy z3fold_handle: Slab cache still has objects when called from z3fold_zpool_destroy+...
#   WARNING: CPU: N PID: N at mm/slab_common.c:... kmem_cache_destroy+...
#   ... Call Trace: ... ---[ end trace ... ]---
# Prints the console without the three report lines of those blocks
# (every other line of a block, e.g. a KASAN or lockdep report that lands
# inside it, is still scanned); "known: N" on stderr.
/BUG z3fold_handle \(.*\): Objects remaining in z3fold_handle on __kmem_cache_shutdown\(\)/ {
	inblock = 1; seen_destroy = 0; known++
	next
}
inblock && /kmem_cache_destroy z3fold_handle: Slab cache still has objects when called from z3fold_zpool_destroy/ {
	seen_destroy = 1
	next
}
inblock && /Call Trace:/ { next }
inblock && /WARNING: CPU: [0-9]+ PID: [0-9]+ at mm\/slab_common\.c:[0-9]+ kmem_cache_destroy\+/ { next }
inblock && seen_destroy && /---\[ end trace/ { inblock = 0; next }
{ print }
END { print "known: " known + 0 > "/dev/stderr" }

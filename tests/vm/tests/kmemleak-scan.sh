# Last test of a run: after every test's rmmod, kmemleak (debug kernel
# only, "make check-debug") finds no unreferenced object. The guest's init
# marked what boot left as known (scan, then clear), so every report here
# is an object allocated during the tests.
# timeout: 900
. /lib.sh
KMEMLEAK=/sys/kernel/debug/kmemleak
[ -e $KMEMLEAK ] || skip "kernel without kmemleak (the debug kernel has it)"
grep -q '^mmtune ' /proc/modules && fail "mmtune still loaded"
# An object must be older than 5 s to be reported; the second scan confirms.
sleep 6
echo scan >$KMEMLEAK || fail "kmemleak scan"
echo scan >$KMEMLEAK || fail "kmemleak scan"
cat $KMEMLEAK >/tmp/kmemleak.out
n=$(grep -c '^unreferenced object' /tmp/kmemleak.out)
[ "$n" -eq 0 ] || { cat /tmp/kmemleak.out; fail "kmemleak: $n unreferenced object(s)"; }
info "ok: kmemleak: no unreferenced object after the last rmmod"

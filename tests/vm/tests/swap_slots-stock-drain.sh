# Slots the stock per-CPU swap slot cache holds when swap_slots goes on are
# returned at once (the kernel drains it when the group goes on), not left
# allocated and charged to a removed memcg while mmtune owns the slots:
# /proc/swaps counts exactly the swap cache then, and after a round through
# mmtune's cache and enabled=0, still exactly; the removed memcgs go away.
. /lib.sh
require_feature swap_slots
swapon_zram 1G
dying() { awk '$1 == "nr_dying_descendants" { print $2 }' /sys/fs/cgroup/cgroup.stat; }
d0=$(dying)
# A round through the stock cache, in a memcg that swap_integrity removes.
swap_integrity --no-thp --size 32 --evict memcg-max --limit 16 --min-out-pct 25 --seed 68 >/tmp/si.out ||
	{ cat /tmp/si.out; fail "stock round"; }
used=$(swap_used /dev/zram0) cached=$(swap_cached)
info "after the stock round: used $used, swap cache $cached"
# Precondition: the stock cache holds slots (what the drain must return).
assert_ge "$used" $((cached + 1)) "slots in use with the stock cache holding some"
slots_setup 64
assert_eq "$(swap_used /dev/zram0)" "$(swap_cached)" "slots in use right after swap_slots went on (= swap cache)"
swap_integrity --no-thp --size 32 --evict memcg-max --limit 16 --min-out-pct 25 --seed 69 >/tmp/si.out ||
	{ cat /tmp/si.out; fail "mmtune round"; }
echo 0 >"$MMTUNE_SLOTS/enabled" || fail "disable swap_slots"
assert_eq "$(swap_used /dev/zram0)" "$(swap_cached)" "slots in use after enabled=0 (= swap cache)"
unload_mmtune
timeout 60 swapoff /dev/zram0 || fail "swapoff"
# The swap charges of the removed memcgs are gone (asserted above through
# /proc/swaps). Whether a removed memcg is freed at once also depends on
# other references (per-CPU charge caches, slab objects), so the count of
# dying memcgs is reported, not asserted.
echo 3 >/proc/sys/vm/drop_caches
n=0
while [ "$(dying)" -gt "$d0" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
info "dying memcgs: $d0 before, $(dying) after swapoff"

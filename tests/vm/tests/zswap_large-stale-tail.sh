# A THP stored in zswap whole, dirtied again while still in the swap
# cache, then written to the disk by the stock path must not read stale
# zswap data back: with the feature switched off, and with the module
# unloaded. The kernel fix holds it (6.1: patch 0003, __frontswap_store();
# 6.12: patch 0002, zswap_store() drops every entry of a large folio it
# refuses). swapcache_pin.ko (tests/kmod; on 6.12 it probes
# zswap_entry_free() and zswap_load(), 6.12 having no frontswap) keeps the
# folio in the swap cache after zswap stored it, so the state is reached
# every run, not by a race. Subpage 0 is rewritten as 6.1 does it; subpage
# 5 as a kernel without CONFIG_KSM does it (zswap_stale.c; 6.12 maps the
# whole swap cache folio again either way): only a rewritten tail makes
# stale entries give wrong bytes, and the module's counters show them
# either way.
# Two more ways a folio stored whole leaves the zswap path: zeroed while
# in the swap cache (6.12: written to the swap zeromap without
# zswap_store(); its old entries must go all the same, or the memcg's
# zswap shrinker writes the old bytes back over the zeros), and its
# process exiting while it is in the swap cache, 16K, 64K and 2M (every
# entry goes with the freed slots, and swapoff finds none left).
# tier: check
. /lib.sh
require_feature zswap_large
PIN_KO=/mmtune/swapcache_pin.ko
PIN=/sys/kernel/debug/swapcache_pin
[ -f $PIN_KO ] || fail "missing $PIN_KO (make modules)"
zswap_large_setup stock
if ! insmod $PIN_KO; then
	# Its one refusal that is not a bug: a kernel without the probes
	# (the module names the config it needs).
	why=$(dmesg | grep "swapcache_pin: cannot probe" | tail -n 1)
	[ -n "$why" ] && skip "${why#*swapcache_pin: }"
	fail "insmod swapcache_pin.ko"
fi
trap 'grep -q "^swapcache_pin " /proc/modules && rmmod swapcache_pin' EXIT
# The module refuses what would not pin, release or re-index a folio.
assert_eq "$(cat $PIN/pfn)" 0 "pinned pfn after insmod"
for w in "1 pfn" "0 pfn" "5 tail_index" "4194305 pid"; do
	if echo "${w% *}" >"$PIN/${w#* }" 2>/dev/null; then
		fail "swapcache_pin took ${w% *} in ${w#* }"
	fi
done

# counters: the ones this test moves, on one line.
# (frontswap's: 6.1 only.)
counters() {
	echo "zswpout $(vmstat zswpout) zswpin $(vmstat zswpin) thp_swpout $(vmstat thp_swpout)" \
		"zswap_stored $(zswap_stored_pages)" \
		"$([ -d /sys/kernel/debug/frontswap ] &&
		echo "frontswap succ_stores $(cat /sys/kernel/debug/frontswap/succ_stores)" \
		"failed_stores $(cat /sys/kernel/debug/frontswap/failed_stores)" \
		"invalidates $(cat /sys/kernel/debug/frontswap/invalidates)")"
}

# stale_case HOW K: HOW (disable | rmmod) is done while the program holds,
# with subpage K rewritten.
stale_case() {
	info "=== $1, subpage $2"
	load_mmtune
	echo 1 >"$MMTUNE_ZSWAP/enabled" || fail "enable zswap_large"
	rm -rf /tmp/hold && mkdir /tmp/hold
	info "before: $(counters)"
	zswap_stale --hold /tmp/hold --pin $PIN --subpage "$2" >/tmp/stale.out 2>&1 &
	pid=$!
	while [ ! -e /tmp/hold/ready ] && kill -0 $pid 2>/dev/null; do sleep 0.1; done
	if [ -e /tmp/hold/ready ]; then
		info "held: $(counters) mmtune thp_stored $(mmtune_zswap thp_stored)"
		assert_ge "$(mmtune_zswap thp_stored)" 1 "$1: THPs stored by mmtune"
		case "$1" in
		disable) echo 0 >"$MMTUNE_ZSWAP/enabled" ;;
		rmmod) unload_mmtune ;;
		esac
		touch /tmp/hold/go
	fi
	wait $pid
	rc=$?
	cat /tmp/stale.out
	info "after: $(counters)"
	grep -q "^mmtune " /proc/modules && unload_mmtune
	[ $rc -eq 0 ] || fail "$1, subpage $2: zswap_stale failed (exit $rc): $(grep -m1 'FAIL' /tmp/stale.out)"
}

for k in 0 5; do
	stale_case disable $k
	stale_case rmmod $k
done

# A zeroed THP (kernels with a swap zeromap): once it has left the swap
# cache, zswap_stale switches the memcg's zswap shrinker on, so that a
# stale entry left behind would be written back over the zeros.
if [ -d /sys/kernel/debug/frontswap ]; then
	info "=== zeroed THP: not on this kernel (no swap zeromap: a zero page is a same-filled zswap entry, stored or dropped as any other)"
else
	info "=== zeroed THP, then the zswap shrinker"
	shrinker=$(cat $ZSWAP_PARAMS/shrinker_enabled)
	echo N >$ZSWAP_PARAMS/shrinker_enabled || fail "zswap shrinker_enabled"
	load_mmtune
	echo 1 >"$MMTUNE_ZSWAP/enabled" || fail "enable zswap_large"
	rm -rf /tmp/hold && mkdir /tmp/hold && touch /tmp/hold/go
	zswap_stale --hold /tmp/hold --pin $PIN --zero >/tmp/stale.out 2>&1
	rc=$?
	cat /tmp/stale.out
	echo "$shrinker" >$ZSWAP_PARAMS/shrinker_enabled
	unload_mmtune
	[ $rc -eq 0 ] || fail "zeroed THP: zswap_stale failed (exit $rc): $(grep -m1 'FAIL' /tmp/stale.out)"
fi

# The process of a folio stored whole exits while the folio is pinned in
# the swap cache: its entries go with the slots; swapoff then finds no
# entry left (zswap_swapoff() warns on a non-empty tree).
warns=$(dmesg | grep -c "WARNING:")
stored0=$(zswap_stored_pages)
load_mmtune
echo 1 >"$MMTUNE_ZSWAP/enabled" || fail "enable zswap_large"
sizes=2048
mthp_has 16 && sizes="16 64 2048"
for kb in $sizes; do
	info "=== ${kb}kB folio, its process exits while it is in the swap cache"
	if mthp_has "$kb"; then mthp_only "$kb"; else thp_always; fi
	zswap_stale --pin $PIN --exit "$kb" || fail "${kb}kB: entries left behind the freed slots"
done
unload_mmtune
assert_le "$(zswap_stored_pages)" "$stored0" "zswap stored_pages after the exits (was $stored0)"
swapoff_all
assert_eq "$(dmesg | grep -c "WARNING:")" "$warns" "kernel warnings after swapoff"

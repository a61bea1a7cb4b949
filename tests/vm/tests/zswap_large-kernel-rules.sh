# The kernel, not the module, holds the rules of a whole-folio zswap store
# (6.12): zswap_liar.ko (tests/kmod) registers, in mmtune.ko's place, a
# zswap_store_large hook that breaks one rule per mode. Each mode pages
# 64K anonymous folios out to the disk behind zswap and reads them back
# equal:
#  - lie (returns 0, stores nothing) and partial (returns 0, the last page
#    missing): no folio counts as stored (the size's zswpout), the folios
#    go to the disk whole, zswap keeps nothing of them, and the kernel
#    logs the module's error;
#  - limits (stores every page even when the kernel's check of
#    memory.zswap.max refused the folio): exactly the folios offered
#    without a refusal count as stored;
#  - reverse (honest, last page first): every folio stored whole;
#  - once (a 2M folio stored whole, rewritten while in the swap cache, then
#    offered again and answered 0 with nothing stored): the old entries
#    are dropped before the offer and cannot pass for this store, so the
#    folio goes to the disk and the rewritten bytes read back (zswap_stale
#    with swapcache_pin.ko, as in zswap_large-stale-tail).
# timeout: 900
. /lib.sh
require_feature zswap_large
LIAR=/mmtune/zswap_liar.ko
LIAR_D=/sys/kernel/debug/zswap_liar
[ -f $LIAR ] || skip "no zswap_liar.ko: this kernel's zswap_store_large hook does not take the limits' verdict (6.1 checks them at a folio's first subpage)"
mthp_require 64 2048
zswap_large_setup stock
trap 'grep -q "^zswap_liar " /proc/modules && rmmod zswap_liar' EXIT

# liar_round MODE SEED [swap_integrity ARGS...]: one 64K round with the
# liar in MODE; sets folios, offered, refused_offers, stored, disk, errors.
liar_round() {
	info "=== mode $1"
	insmod $LIAR mode="$1" || fail "insmod zswap_liar.ko mode=$1"
	# The module's error as the kernel logs it: nothing stored (lie) or
	# all but the last page (partial).
	case "$1" in partial) _stored_re=15 ;; *) _stored_re=0 ;; esac
	errs0=$(dmesg | grep -c "mmtune: zswap_store_large stored $_stored_re of")
	stored0=$(zswap_stored_pages)
	_mode=$1 _seed=$2
	shift 2
	mthp_run /tmp/si.out 64 anon --size 16 --fill compressible --evict pageout --min-out-pct 90 --seed "$_seed" "$@"
	folios=$(si_delta /tmp/si.out region_folios)
	stored=$(si_delta /tmp/si.out mthp_zswpout)
	disk=$(si_delta /tmp/si.out mthp_swpout)
	offered=$(cat $LIAR_D/offered) refused_offers=$(cat $LIAR_D/refused_offers)
	errors=$(( $(dmesg | grep -c "mmtune: zswap_store_large stored $_stored_re of") - errs0 ))
	rmmod zswap_liar || fail "rmmod zswap_liar"
	info "mode $_mode: folios $folios offered $offered (refused by a limit $refused_offers) stored $stored to disk $disk, kernel errors $errors, zswap stored_pages $stored0 -> $(zswap_stored_pages)"
	assert_ge "$offered" "$folios" "mode $_mode: folios offered to the hook (of $folios)"
}

for m in lie partial; do
	# The kernel's error line is ratelimited (10 per 5 s): a new burst
	# for each mode.
	sleep 6
	liar_round $m 61
	assert_eq "$stored" 0 "mode $m: hugepages-64kB zswpout delta (no folio counts as stored)"
	assert_ge "$disk" $((folios * 9 / 10)) "mode $m: folios written to the disk whole (of $folios)"
	assert_ge "$errors" 1 "mode $m: kernel log lines naming the module's error"
	assert_le "$(zswap_stored_pages)" "$stored0" "mode $m: zswap stored_pages (nothing of the refused folios kept)"
done

liar_round limits 62 --zswap-max 1024
assert_ge "$refused_offers" 1 "mode limits: folios offered with a limit's refusal"
assert_eq "$stored" $((offered - refused_offers)) "mode limits: folios stored (offered less those a limit refused)"

liar_round reverse 63
assert_eq "$stored" "$folios" "mode reverse: hugepages-64kB zswpout delta (every folio stored whole)"
assert_eq "$errors" 0 "mode reverse: kernel log lines naming a module error"

info "=== mode once"
PIN=/sys/kernel/debug/swapcache_pin
insmod /mmtune/swapcache_pin.ko || fail "insmod swapcache_pin.ko"
thp_always
mthp_only 2048
insmod $LIAR mode=once || fail "insmod zswap_liar.ko mode=once"
rm -rf /tmp/hold && mkdir /tmp/hold && touch /tmp/hold/go
zswap_stale --hold /tmp/hold --pin $PIN --subpage 0 >/tmp/stale.out 2>&1
rc=$?
cat /tmp/stale.out
rmmod zswap_liar
rmmod swapcache_pin
[ $rc -eq 0 ] || fail "mode once: zswap_stale failed (exit $rc): $(grep -m1 'FAIL' /tmp/stale.out)"

# A THP stored in zswap whole, dirtied again while still in the swap
# cache, then written to the disk by the stock path must not read stale
# zswap data back: with the feature switched off, and with the module
# unloaded. The kernel fix (patch 0002, __frontswap_store()) holds it.
. /lib.sh
zswap_large_setup stock

# stale_case HOW: HOW (disable | rmmod) is done while the program holds.
stale_case() {
	load_mmtune
	echo 1 >"$MMTUNE_ZSWAP/enabled" || fail "enable zswap_large"
	rm -rf /tmp/hold && mkdir /tmp/hold
	zswap_stale --hold /tmp/hold >/tmp/stale.out 2>&1 &
	pid=$!
	while [ ! -e /tmp/hold/ready ] && kill -0 $pid 2>/dev/null; do sleep 0.1; done
	if [ -e /tmp/hold/ready ]; then
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
	grep -q "^mmtune " /proc/modules && unload_mmtune
	case $rc in
	0) ;;
	4) skip "$1: $(tail -n 1 /tmp/stale.out)" ;;
	*) fail "$1: stale data read back (exit $rc)" ;;
	esac
}

stale_case disable
stale_case rmmod

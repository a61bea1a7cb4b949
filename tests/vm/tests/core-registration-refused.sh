# The hook core takes one registrant at a time (-EBUSY for a second) and
# refuses another ABI version (-EINVAL) with one clear line in dmesg.
# tier: check
. /lib.sh
load_mmtune
dmesg -c >/dev/null
err=$(insmod_error "$PROBE_KO")
echo "$err"
case "$err" in *"(EBUSY)"*) ;; *) fail "second registrant: expected EBUSY, got: $err" ;; esac
dmesg | grep -q "mmtune_hooks: mmtune_probe: refused, mmtune is already registered" ||
	fail "no dmesg line for the refused second registrant"
assert_eq "$(hooks_state registered)" mmtune "registrant after a refused second one"
unload_mmtune

dmesg -c >/dev/null
err=$(insmod_error "$PROBE_KO" abi_version=999)
echo "$err"
case "$err" in *"(EINVAL)"*) ;; *) fail "wrong ABI: expected EINVAL, got: $err" ;; esac
dmesg
abi=$(hooks_state abi_version)
assert_eq "$(dmesg | grep -c "mmtune_hooks: mmtune_probe: ABI version 999 (ops size [0-9]*), kernel has $abi ")" 1 "dmesg lines for the wrong ABI"
assert_hooks_idle

# The other way round: while the probe holds the hooks, mmtune.ko is refused.
insmod "$PROBE_KO" || fail "probe with the right ABI"
assert_eq "$(hooks_state registered)" mmtune_probe "registrant"
err=$(insmod_error "$MMTUNE_KO")
case "$err" in *"(EBUSY)"*) ;; *) fail "mmtune.ko while probe registered: expected EBUSY, got: $err" ;; esac
[ ! -e "$MMTUNE_SYSFS" ] || fail "a refused mmtune.ko left $MMTUNE_SYSFS behind"
rmmod mmtune_probe || fail "rmmod mmtune_probe"
assert_hooks_idle

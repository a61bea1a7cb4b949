# mmtune.ko registers with the hook core and shows version, ABI and
# features under /sys/kernel/mm/mmtune.
# tier: check
. /lib.sh
load_mmtune
cat "$HOOKS_STATE"
assert_eq "$(hooks_state registered)" mmtune "hook core registrant"
assert_eq "$(cat $MMTUNE_SYSFS/abi_version)" "$(hooks_state abi_version)" "module ABI = kernel ABI"
want_version=$(cat /mmtune/mmtune.version)
[ -n "$want_version" ] || fail "modinfo (on the host) shows no version"
assert_eq "$(cat $MMTUNE_SYSFS/version)" "$want_version" "sysfs version = modinfo version"
cat "$MMTUNE_SYSFS/features"
assert_eq "$(awk '{ print $1 }' $MMTUNE_SYSFS/features | tr '\n' ' ')" "$FEATURES " "feature names"
bad=$(awk '$2 !~ /^(on|off|unavailable|not-offered)$/' "$MMTUNE_SYSFS/features")
[ -z "$bad" ] || fail "bad feature state line(s): $bad"
# not-offered: exactly the groups without a hook in the kernel's table.
for f in $FEATURES; do
	state=$(awk -v f="$f" '$1 == f { print $2 }' "$MMTUNE_SYSFS/features")
	hooks=$(awk -v f="$f" '$1 == "hook" && $3 == f' "$HOOKS_STATE" | wc -l)
	if [ "$hooks" -eq 0 ]; then
		assert_eq "$state" not-offered "$f state (no hook of its group in this kernel)"
		[ ! -e "$MMTUNE_SYSFS/$f" ] || fail "$f is not offered but has $MMTUNE_SYSFS/$f"
	else
		[ "$state" != not-offered ] || fail "$f not-offered with $hooks hook(s) in this kernel"
	fi
done
# A feature the module reports as on must have its static key on, and back.
for f in $FEATURES; do
	state=$(awk -v f="$f" '$1 == f { print $2 }' "$MMTUNE_SYSFS/features")
	key=$(hooks_state "$f")
	[ "$state" = on ] && [ "$key" != on ] && fail "$f is on but its key is $key"
	[ "$state" != on ] && [ "$key" = on ] && fail "$f key is on but the module says $state"
done
unload_mmtune

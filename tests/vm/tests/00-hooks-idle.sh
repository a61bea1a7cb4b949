# The patched kernel without the module: hook core present, nobody
# registered, every static key off, no mmtune sysfs.
. /lib.sh
[ -r "$HOOKS_STATE" ] || fail "$HOOKS_STATE missing: kernel without CONFIG_MMTUNE_HOOKS?"
cat "$HOOKS_STATE"
assert_eq "$(hooks_state abi_version)" 6 "kernel hook ABI version"
assert_hooks_idle

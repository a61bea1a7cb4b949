# The patched kernel without the module: hook core present, nobody
# registered, every static key off, no mmtune sysfs.
# tier: check
. /lib.sh
[ -r "$HOOKS_STATE" ] || fail "$HOOKS_STATE missing: kernel without CONFIG_MMTUNE_HOOKS?"
cat "$HOOKS_STATE"
assert_eq "$(hooks_state abi_version)" "$(knob_rows . | awk -F'\t' '$2 == "abi_version" { print $5 }')" "kernel hook ABI version (knob table)"
# Each hook of the kernel's table: a known group, a class, and unset.
grep -q '^hook ' "$HOOKS_STATE" || fail "no hook lines"
bad=$(awk -v feats=" $FEATURES " '$1 == "hook" && (index(feats, " " $3 " ") == 0 ||
	($4 != "ATOMIC" && $4 != "SLEEPABLE") || $5 != "-")' "$HOOKS_STATE")
assert_eq "$bad" "" "hook lines with an unknown group or class, or set with nobody registered"
assert_hooks_idle

# The profile across module unload and reload: mmtune knobs are optional
# (skipped while the module is away) but verify says the module is missing
# (exit 3: this kernel has the hooks); a reload brings the knobs back at
# their defaults (drift), and apply --auto --reload (mmtune.service's
# ExecReload, which 60-mmtune.rules triggers through mmtune-reapply.service)
# restores the profile.
. /lib.sh
. /mmtunectl-lib.sh
trap ctl_cleanup EXIT
mkdir -p /etc/mmtune
echo balanced >/etc/mmtune/profile
ctl_rc 0 apply balanced
out_has "warning: kernel feature mmtune is absent (no /sys/kernel/mm/mmtune"
ctl_rc 3 verify
out_has "module: mmtune.ko is not loaded (no /sys/kernel/mm/mmtune) but the kernel has the mmtune hooks"
ctl_rc 3 status --json
echo "$out" | grep -q '"module_expected": true' || fail "status --json: module_expected not true"
load_mmtune
if [ -f "$MMTUNE_SYSFS/zswap_large/enabled" ]; then
	ctl_rc 1 verify
	out_has "drift: mmtune.zswap_large.enabled: wanted 1, live 0"
fi
ctl_rc 0 apply --auto --reload
ctl_rc 0 verify
readback_check || fail "values after re-apply"
unload_mmtune
ctl_rc 3 verify
out_has "verify: profile balanced: "
load_mmtune
ctl_rc 0 apply --auto
ctl_rc 0 verify
ctl_rc 0 rollback

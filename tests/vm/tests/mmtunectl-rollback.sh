# rollback after two applies restores the values from before mmtune, and a
# stop-like rollback with nothing saved is a no-op.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap ctl_cleanup EXIT
knob_snapshot /tmp/before
ctl_rc 0 apply database
ctl_rc 0 apply virtualization-host
knob_snapshot /tmp/mid
diff /tmp/before /tmp/mid >/dev/null && fail "the profiles changed nothing"
ctl_rc 0 rollback
out_has "rolled back profile virtualization-host: "
knob_snapshot /tmp/after
same_snapshot /tmp/before /tmp/after "rollback restored every knob"
[ ! -e /run/mmtune/state.json ] || fail "state kept after rollback"
ctl_rc 0 rollback
out_has "nothing to roll back"

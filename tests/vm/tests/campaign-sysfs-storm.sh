# Campaign: a 2-minute sysfs storm under the same load as campaign-reload. Two
# writers (one per vCPU, in opposite orders) go through every writable file
# of sysfs-docs/knobs.tsv again and again: "enabled" flipped, every u32 at
# its lowest and highest value, one past each end, and its middle, every
# choice and a bogus one. Each write is accepted or refused with EINVAL
# (nothing else); every load round reads back equal; afterwards the
# defaults go back, every file reads as the table says, and after rmmod the
# slots in use are exactly what processes hold.
# slow: about 3 minutes under TCG; "make check" may leave it to a slow target.
# timeout: 600
. /lib.sh
storm_secs=120
campaign_swap_setup
campaign_hold_start
load_mmtune
campaign_features_on
campaign_load_start

# The writes of one pass, "FILE VALUE" lines, from the table.
knob_rows | awk -F'\t' '$4 == "rw" {
	p = "'"$MMTUNE_SYSFS"'/" $1 "/" $2
	if ($3 == "bool") { print p, 0; print p, 1 }
	else if ($3 == "choice") { n = split($6, c, "|"); for (i = 1; i <= n; i++) print p, c[i]; print p, "bogus" }
	else if ($3 == "u32") {
		n = split($6, r, /[-,]/); lo = r[1]; hi = r[n]
		print p, lo; print p, hi; print p, int((lo + hi) / 2); print p, hi + 1
		if (lo > 0) print p, lo - 1
	}
}' >/tmp/storm.writes
sed -n "1!G;h;\$p" /tmp/storm.writes >/tmp/storm.reversed
info "$(wc -l </tmp/storm.writes) writes per pass"

# storm ID FILE: passes over FILE until the time is up; any result but ok
# and EINVAL fails.
storm() {
	end=$(( $(cut -d. -f1 /proc/uptime) + storm_secs ))
	passes=0 writes=0 refused=0
	while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
		while read -r f v; do
			r=$(sysfs_write "$f" "$v")
			case "$r" in
			ok) ;;
			EINVAL) refused=$((refused + 1)) ;;
			*) echo "storm $1: writing '$v' to $f: $r"; touch /tmp/storm.failed; exit 1 ;;
			esac
			writes=$((writes + 1))
		done <"$2"
		passes=$((passes + 1))
		[ -e /tmp/load/failed ] && exit 1
	done
	echo "storm $1: $passes passes, $writes writes, $refused refused (EINVAL)"
}
rm -f /tmp/storm.failed
storm 1 /tmp/storm.writes >/tmp/storm1.out 2>&1 &
s1=$!
storm 2 /tmp/storm.reversed >/tmp/storm2.out 2>&1 &
s2=$!
wait $s1; wait $s2
cat /tmp/storm1.out /tmp/storm2.out
[ -e /tmp/storm.failed ] && fail "a sysfs write failed with neither ok nor EINVAL"
campaign_load_ok
grep -q passes /tmp/storm1.out && grep -q passes /tmp/storm2.out || fail "a storm writer did not finish"

# Defaults back (twice: a cross-knob rule may need the other file first).
for pass in 1 2; do
	knob_rows | awk -F'\t' '$4 == "rw" && $5 != "" { print $1, $2, $5 }' | while read -r d k v; do
		printf '%s\n' "$v" >"$MMTUNE_SYSFS/$d/$k" 2>/dev/null
	done
done
knob_rows | awk -F'\t' '$4 == "rw" && $5 != "" { print $1, $2, $5 }' | while read -r d k v; do
	got=$(cat "$MMTUNE_SYSFS/$d/$k")
	case "$got" in *\[*) got=${got#*[}; got=${got%%]*} ;; esac
	[ "$got" = "$v" ] || fail "$d/$k is '$got' after restoring the default '$v'"
done
info "ok: every writable file back at its default"
sleep 2
campaign_load_stop
unload_mmtune
campaign_swap_check
campaign_hold_check
assert_hooks_idle

# The table mmtunectl reads its mmtune knobs and counters from
# (sysfs-docs/knobs.tsv, installed next to the package) against the live
# module right after loading: every file with its mode and nothing more,
# every rw default, every choice word and the ends of every u32 range
# accepted, one past the end refused, and every counter shown by status.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap ctl_cleanup EXIT

[ -s "$KNOBS_TSV" ] || fail "no $KNOBS_TSV"
awk -F'\t' 'NR > 1 { print ($1 == "." ? "" : $1 "/") $2, ($4 == "rw" ? 644 : 444) }' "$KNOBS_TSV" |
	sort >/tmp/table
(cd "$MMTUNE_SYSFS" && find . -type f | sed 's|^\./||' | while read -r f; do
	echo "$f $(stat -c %a "$f")"
done) | sort >/tmp/live
diff /tmp/table /tmp/live || fail "knobs.tsv and the live tree differ (< table, > live)"
info "ok: $(wc -l </tmp/table) files, modes equal"

# rw knobs: default, accepted values, refused values. Each is put back.
awk -F'\t' 'NR > 1 && $4 == "rw" { print $1, $2, $3, $5, ($6 == "" ? "-" : $6) }' "$KNOBS_TSV" >/tmp/rw
while read -r dir file type default values; do
	f=$MMTUNE_SYSFS/$dir/$file
	assert_eq "$(cat "$f")" "$default" "$dir/$file default"
	case $type in
	choice)
		for w in $(echo "$values" | tr '|' ' '); do
			echo "$w" >"$f" || fail "$dir/$file refused $w"
		done
		echo "nosuchword" >"$f" 2>/dev/null && fail "$dir/$file took nosuchword"
		;;
	bool)
		echo 2 >"$f" 2>/dev/null && fail "$dir/$file took 2"
		;;
	u32)
		# One past either end of the range is refused. (The ends
		# themselves may break a cross-knob rule against the other
		# knob's default, so they are not asserted here.)
		lo=${values%%-*}; lo=${lo%%,*}
		hi=${values##*-}
		echo $((hi + 1)) >"$f" 2>/dev/null && fail "$dir/$file took $((hi + 1))"
		if [ "$lo" -gt 0 ]; then
			echo $((lo - 1)) >"$f" 2>/dev/null && fail "$dir/$file took $((lo - 1))"
		fi
		;;
	esac
	echo "$default" >"$f" || fail "cannot put $dir/$file back to $default"
done </tmp/rw
info "ok: $(wc -l </tmp/rw) rw knobs: defaults, choices and range ends as the table says"

# Every counter of the table is in status --json and in the metrics.
ctl_rc 0 apply balanced
"$MMTUNECTL" status --json >/tmp/status.json
"$MMTUNECTL" status --prometheus >/tmp/metrics.prom || fail "status --prometheus"
awk -F'\t' 'NR > 1 && $3 == "counter" { print $1, $2 }' "$KNOBS_TSV" | while read -r dir file; do
	grep -q "\"mmtune.$dir.$file\": [0-9]" /tmp/status.json || fail "status --json lacks mmtune.$dir.$file"
	grep -q "^mmtune_${dir}_${file}_total [0-9]" /tmp/metrics.prom || fail "metrics lack $dir/$file"
done
info "ok: $(awk -F'\t' '$3 == "counter"' "$KNOBS_TSV" | wc -l) counters in status and metrics"

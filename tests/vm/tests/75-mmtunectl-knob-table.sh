# mmtunectl's copy of the knob table (knobs.tsv installed next to the
# package) is the table the module is checked against (24-knobs), and every
# counter the table has on this kernel line (its lines column) shows in
# status --json and in the metrics.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap ctl_cleanup EXIT

[ -s "$KNOBS_TSV" ] || fail "no $KNOBS_TSV"
cmp "$KNOBS_TSV" "$KNOBS" || fail "mmtunectl's knobs.tsv differs from sysfs-docs/knobs.tsv"

# Every counter of the table on this line is in status --json and in the
# metrics (knob_rows: the rows of the line running).
ctl_rc 0 apply balanced
"$MMTUNECTL" status --json >/tmp/status.json
"$MMTUNECTL" status --prometheus >/tmp/metrics.prom || fail "status --prometheus"
knob_rows | awk -F'\t' '$3 == "counter" { print $1, $2 }' | while read -r dir file; do
	grep -q "\"mmtune.$dir.$file\": [0-9]" /tmp/status.json || fail "status --json lacks mmtune.$dir.$file"
	# A counter of bytes carries the unit before _total.
	case $file in bytes_*) name=${file#bytes_}_bytes ;; *) name=$file ;; esac
	grep -q "^mmtune_${dir}_${name}_total [0-9]" /tmp/metrics.prom || fail "metrics lack $dir/$file"
done || exit 1	# the loop is a subshell: its fail ends only itself
# And no counter of another line's only: a feature this line does not offer
# has none to show.
awk -F'\t' -v line="$MMTUNE_LINE" '!/^#/ && $1 != "dir" && $3 == "counter" &&
	!index(" " $8 " ", " " line " ") { print $1, $2 }' "$KNOBS" | while read -r dir file; do
	if grep -q "\"mmtune.$dir.$file\"" /tmp/status.json; then
		fail "status --json shows mmtune.$dir.$file, a counter of another kernel line"
	fi
	case $file in bytes_*) name=${file#bytes_}_bytes ;; *) name=$file ;; esac
	if grep -q "^mmtune_${dir}_${name}_total " /tmp/metrics.prom; then
		fail "metrics show $dir/$file, a counter of another kernel line"
	fi
done || exit 1
info "ok: $(knob_rows | awk -F'\t' '$3 == "counter"' | wc -l) counters of the $MMTUNE_LINE line in status and metrics"

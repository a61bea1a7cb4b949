# mmtunectl's copy of the knob table (knobs.tsv installed next to the
# package) is the table the module is checked against (core-knobs), and every
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
# The kernel's per-size counters (6.12, hugepages-<size>kB/stats): each
# size in status --json's size_counters, with zswpout (the series' per-size
# counter), and in the metrics as mmtune_thp_zswpout_total{size="..."}; 6.1
# has none.
n=0
for d in /sys/kernel/mm/transparent_hugepage/hugepages-*kB; do
	[ -d "$d" ] || continue
	size=${d##*/hugepages-}
	[ -f "$d/stats/zswpout" ] || fail "no $d/stats/zswpout"
	python3 -c '
import json, sys
doc = json.load(open("/tmp/status.json"))
size, live = sys.argv[1], int(sys.argv[2])
st = doc.get("size_counters", {}).get(size)
if st is None or "zswpout" not in st:
    sys.exit("status --json size_counters lacks %s zswpout: %r" % (size, st))
# A counter only grows: it read live before the status ran.
if st["zswpout"] < live:
    sys.exit("size_counters %s zswpout %d, the file read %d before" % (size, st["zswpout"], live))
' "$size" "$(cat "$d/stats/zswpout")" || fail "status --json: size $size"
	grep -q "^mmtune_thp_zswpout_total{size=\"$size\"} [0-9]" /tmp/metrics.prom ||
		fail "metrics lack mmtune_thp_zswpout_total{size=\"$size\"}"
	n=$((n + 1))
done
case $MMTUNE_LINE in
6.12) [ "$n" -gt 0 ] || fail "6.12 without hugepages-<size>kB directories" ;;
*) [ "$n" = 0 ] || fail "hugepages-<size>kB directories on $MMTUNE_LINE"
	python3 -c 'import json; d = json.load(open("/tmp/status.json")); assert not d["size_counters"], d["size_counters"]' ||
		fail "status --json shows size counters on $MMTUNE_LINE" ;;
esac
grep -q "^mmtune_kernel_info{.*line=\"$MMTUNE_LINE\"" /tmp/metrics.prom ||
	fail "metrics lack mmtune_kernel_info with line $MMTUNE_LINE"
info "ok: $n mTHP sizes' counters in status --json and the metrics"
info "ok: $(knob_rows | awk -F'\t' '$3 == "counter"' | wc -l) counters of the $MMTUNE_LINE line in status and metrics"

# mmtunectl's copy of the knob table (knobs.tsv installed next to the
# package) is the table the module is checked against (24-knobs), and every
# counter of the table shows in status --json and in the metrics.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap ctl_cleanup EXIT

[ -s "$KNOBS_TSV" ] || fail "no $KNOBS_TSV"
cmp "$KNOBS_TSV" "$KNOBS" || fail "mmtunectl's knobs.tsv differs from sysfs-docs/knobs.tsv"

# Every counter of the table is in status --json and in the metrics.
ctl_rc 0 apply balanced
"$MMTUNECTL" status --json >/tmp/status.json
"$MMTUNECTL" status --prometheus >/tmp/metrics.prom || fail "status --prometheus"
awk -F'\t' 'NR > 1 && !/^#/ && $3 == "counter" { print $1, $2 }' "$KNOBS_TSV" | while read -r dir file; do
	grep -q "\"mmtune.$dir.$file\": [0-9]" /tmp/status.json || fail "status --json lacks mmtune.$dir.$file"
	# A counter of bytes carries the unit before _total.
	case $file in bytes_*) name=${file#bytes_}_bytes ;; *) name=$file ;; esac
	grep -q "^mmtune_${dir}_${name}_total [0-9]" /tmp/metrics.prom || fail "metrics lack $dir/$file"
done
info "ok: $(awk -F'\t' '!/^#/ && $3 == "counter"' "$KNOBS_TSV" | wc -l) counters in status and metrics"

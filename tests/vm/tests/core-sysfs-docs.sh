# sysfs-docs/ and the live /sys/kernel/mm/mmtune agree in both directions,
# for the kernel line running (an entry's KernelVersion: lists its lines):
# every documented file exists with its documented mode ((RO) 444,
# (RW) 644, (WO) 200), and every live file is documented.
# tier: check
. /lib.sh
load_mmtune
docs=/tmp/documented
live=/tmp/live
# "<path> <mode>" for every documented file of this line (What: lines not
# ending in /; one entry may have several What: lines, all of one mode).
awk -v line="$MMTUNE_LINE" '
	/^What:/ { if (!inwhat) { n = 0; ours = 0 }; inwhat = 1; whats[++n] = $2; want = 0; next }
	{ inwhat = 0 }
	/^KernelVersion:/ { v = $0; sub(/^KernelVersion:[ \t]*/, "", v); gsub(/,/, " ", v)
		ours = index(" " v " ", " " line " ") > 0; next }
	/^Description:/ { want = 1; next }
	want && /\((RO|RW|WO)\)/ {
		match($0, /\((RO|RW|WO)\)/)
		m = substr($0, RSTART + 1, 2)
		mode = (m == "RO") ? "444" : (m == "RW") ? "644" : "200"
		for (i = 1; i <= n; i++)
			if (ours && whats[i] !~ /\/$/) print whats[i], mode
		want = 0
	}
' /sysfs-docs/* | sort >"$docs"
# Paths of file A missing from file B (first column).
only_in() { awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { print $1 }' "$2" "$1"; }
# Every What: file of this line (for the entries that name no mode).
awk -v line="$MMTUNE_LINE" '
	/^What:/ { if (!inwhat) n = 0; inwhat = 1; whats[++n] = $2; next }
	{ inwhat = 0 }
	/^KernelVersion:/ { v = $0; sub(/^KernelVersion:[ \t]*/, "", v); gsub(/,/, " ", v)
		if (index(" " v " ", " " line " ")) for (i = 1; i <= n; i++) if (whats[i] !~ /\/$/) print whats[i] }
' /sysfs-docs/* | sort >/tmp/whats
undocumented_mode=$(only_in /tmp/whats "$docs")
[ -z "$undocumented_mode" ] || fail "ABI entries without (RO)/(RW)/(WO): $undocumented_mode"
find "$MMTUNE_SYSFS" -type f | while read -r f; do echo "$f $(stat -c %a "$f")"; done | sort >"$live"
echo "documented:"; cat "$docs"
echo "live:"; cat "$live"
[ -s "$docs" ] || fail "no documented files"
missing=$(only_in "$docs" "$live")
extra=$(only_in "$live" "$docs")
[ -z "$missing" ] || fail "documented but not in the live tree: $missing"
[ -z "$extra" ] || fail "live but not documented: $extra"
diff "$docs" "$live" || fail "modes differ between docs and live tree"
# Read every file: a documented file must be readable if it is not WO.
while read -r f m; do
	[ "$m" = 200 ] && continue
	cat "$f" >/dev/null || fail "cannot read $f"
done <"$docs"
unload_mmtune

# sysfs-docs/ and the live /sys/kernel/mm/mmtune agree in both directions:
# every documented file exists with its documented mode ((RO) 444,
# (RW) 644, (WO) 200), and every live file is documented.
. /lib.sh
load_mmtune
docs=/tmp/documented
live=/tmp/live
# "<path> <mode>" for every documented file of this kernel line (What:
# lines not ending in /; an entry may have several What: lines, and its
# KernelVersion: names the lines it exists on).
awk -v line="$MMTUNE_LINE" '
	/^What:/ { if (!inwhat) n = 0; inwhat = 1; what[++n] = $2; next }
	{ inwhat = 0 }
	/^KernelVersion:/ { sub(/^KernelVersion:[ \t]*/, ""); gsub(/,/, " "); ours = index(" " $0 " ", " " line " ") > 0; next }
	/^Description:/ { want = 1; next }
	want && /\((RO|RW|WO)\)/ {
		match($0, /\((RO|RW|WO)\)/)
		m = substr($0, RSTART + 1, 2)
		mode = (m == "RO") ? "444" : (m == "RW") ? "644" : "200"
		for (i = 1; i <= n; i++)
			if (what[i] !~ /\/$/ && ours) print what[i], mode
		want = 0
	}
' /sysfs-docs/* | sort >"$docs"
# Paths of file A missing from file B (first column).
only_in() { awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { print $1 }' "$2" "$1"; }
# Every What: of this line's entries (a sanity check of the awk above).
awk -v line="$MMTUNE_LINE" '
	/^What:/ { if (!inwhat) n = 0; inwhat = 1; what[++n] = $2; next }
	{ inwhat = 0 }
	/^KernelVersion:/ { sub(/^KernelVersion:[ \t]*/, ""); gsub(/,/, " ")
		if (index(" " $0 " ", " " line " ")) for (i = 1; i <= n; i++) if (what[i] !~ /\/$/) print what[i] }
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

# Every file of /sys/kernel/mm/mmtune against the knob table
# (sysfs-docs/knobs.tsv), in both directions, for every feature the module
# lists in its features file: mode, default, the values each knob accepts
# and refuses (EINVAL, old value kept), cross-knob rules, read-only
# counters (EACCES), and "enabled" switching the feature's static key.
. /lib.sh
load_mmtune
assert_eq "$(cat $MMTUNE_SYSFS/abi_version)" "$(hooks_state abi_version)" "module and kernel ABI"

# Both ways: the live tree and the table name the same files.
find "$MMTUNE_SYSFS" -type f | sed "s|^$MMTUNE_SYSFS/||; s|^\([^/]*\)$|./\1|" | sort >/tmp/live
knob_rows | awk -F'\t' '{ print $1 "/" $2 }' | sort >/tmp/table
diff /tmp/table /tmp/live || fail "knob table and live tree differ (< table only, > live only)"
# Every feature the module has is a directory of the table, and only those.
offered_features | sort >/tmp/feat
knob_rows | awk -F'\t' '$1 != "." { print $1 }' | sort -u >/tmp/tdirs
diff /tmp/feat /tmp/tdirs || fail "features file and table directories differ"

# The word a choice file shows as selected: "a [b] c" -> b.
shown() { f=$(cat "$1"); case "$f" in *\[*) f=${f#*[}; f=${f%%]*} ;; esac; echo "$f"; }
write_ok() { printf '%s\n' "$2" >"$1" || fail "writing '$2' to $1"; assert_eq "$(shown "$1")" "$2" "$1 after '$2'"; }
refused() {
	old=$(cat "$1")
	assert_eq "$(sysfs_write "$1" "$2")" EINVAL "writing '$2' to $1"
	assert_eq "$(cat "$1")" "$old" "$1 kept after '$2'"
}
val() { knob_rows "$1" | awk -F'\t' -v f="$2" -v c="$3" '$2 == f { print $c }'; }
# A u32's values "lo-hi" or "a,b-c": the lowest and the highest accepted,
# and the numbers between two ranges (refused).
range_lo() { echo "$1" | sed 's/[-,].*//'; }
range_hi() { echo "$1" | sed 's/.*[-,]//'; }
range_gaps() {
	echo "$1" | tr ',' '\n' | awk -F- '{ lo = $1; hi = (NF > 1) ? $2 : $1
		if (NR > 1 && lo > prev + 1) print prev + 1, lo - 1; prev = hi }'
}

# A cross-knob rule "OP OTHER" out of the way: OTHER at its far end.
loosen() {
	op=${1%% *} other=${1#* }; other=${other%% *}
	lo=$(range_lo "$(val "$2" "$other" 6)") hi=$(range_hi "$(val "$2" "$other" 6)")
	case "$op" in '>'|'>=') printf '%s\n' "$lo" >"$MMTUNE_SYSFS/$2/$other" ;;
	'<'|'<=') printf '%s\n' "$hi" >"$MMTUNE_SYSFS/$2/$other" ;; esac
}

# check_rule DIR FILE "OP OTHER" LO HI: with OTHER at a middle value V, the
# values of FILE on either side of V are accepted or refused as OP says.
check_rule() {
	d=$1 f=$2 op=${3%% *} other=${3#* }; other=${other%% *}
	ovals=$(val "$d" "$other" 6)
	v=$(( ($(range_lo "$ovals") + $(range_hi "$ovals")) / 2 ))
	[ $v -lt 1 ] && v=1
	printf '%s\n' "$v" >"$MMTUNE_SYSFS/$d/$other" || fail "setting $d/$other to $v"
	case "$op" in
	'<') refused "$MMTUNE_SYSFS/$d/$f" $v; write_ok "$MMTUNE_SYSFS/$d/$f" $((v - 1)) ;;
	'<=') refused "$MMTUNE_SYSFS/$d/$f" $((v + 1)); write_ok "$MMTUNE_SYSFS/$d/$f" $v ;;
	'>') refused "$MMTUNE_SYSFS/$d/$f" $v; write_ok "$MMTUNE_SYSFS/$d/$f" $((v + 1)) ;;
	'>=') refused "$MMTUNE_SYSFS/$d/$f" $((v - 1)); write_ok "$MMTUNE_SYSFS/$d/$f" $v ;;
	esac
}

# defaults DIR: every rw knob of DIR but enabled back to the table's
# default (twice: a rule may refuse one until another is back).
defaults() {
	for pass in 1 2; do
		knob_rows "$1" | awk -F'\t' '$4 == "rw" && $5 != "" && $2 != "enabled" { print $2, $5 }' |
			while read -r k v; do printf '%s\n' "$v" >"$MMTUNE_SYSFS/$1/$k" 2>/dev/null; done
	done
	knob_rows "$1" | awk -F'\t' '$4 == "rw" && $5 != "" && $2 != "enabled" { print $2, $5 }' |
		while read -r k v; do assert_eq "$(shown "$MMTUNE_SYSFS/$1/$k")" "$v" "$1/$k back to its default"; done ||
		exit 1	# a pipeline's loop is a subshell: its fail ends only itself
}

rules=/tmp/rules
: >"$rules"
knob_rows >/tmp/rows
# Every default first, before any write moves a counter.
while IFS="$(printf '\t')" read -r d f type mode def values rule; do
	p=$MMTUNE_SYSFS/$d/$f
	[ "$d" = . ] && p=$MMTUNE_SYSFS/$f
	[ -n "$def" ] && assert_eq "$(shown "$p")" "$def" "$d/$f default"
done </tmp/rows
while IFS="$(printf '\t')" read -r d f type mode def values rule; do
	p=$MMTUNE_SYSFS/$d/$f
	[ "$d" = . ] && p=$MMTUNE_SYSFS/$f
	want=$([ "$mode" = rw ] && echo 644 || echo 444)
	assert_eq "$(stat -c %a "$p")" "$want" "$d/$f mode"
	if [ "$mode" = ro ]; then
		assert_eq "$(sysfs_write "$p" 5)" EACCES "writing read-only $d/$f"
		continue
	fi
	case "$rule" in '<'*|'>'*) loosen "$rule" "$d"; echo "$d	$f	$rule	$values" >>"$rules" ;; esac
	# Knobs whose rule names this one: out of the way too.
	knob_rows "$d" | awk -F'\t' -v f="$f" '{ split($7, r, " ") } r[2] == f { print $2, r[1], $6 }' |
		while read -r other op ovals; do
			case "$op" in
			'<'|'<=') v=$(range_lo "$ovals") ;;
			*) v=$(range_hi "$ovals") ;;
			esac
			printf '%s\n' "$v" >"$MMTUNE_SYSFS/$d/$other" || fail "setting $d/$other to $v"
		done || exit 1
	case "$type" in
	bool)
		for v in 1 0; do write_ok "$p" $v; done
		for bad in 2 -1 yes on "" " 1" 1x 0x1 10; do refused "$p" "$bad"; done ;;
	u32)
		lo=$(range_lo "$values") hi=$(range_hi "$values")
		write_ok "$p" "$hi"; write_ok "$p" "$lo"
		[ "$lo" -gt 0 ] && refused "$p" $((lo - 1))
		range_gaps "$values" | while read -r a b; do refused "$p" "$a"; refused "$p" "$b"; done || exit 1
		for bad in $((hi + 1)) -1 4294967296 "" abc 1x 0x10 " 5" 1e3; do refused "$p" "$bad"; done ;;
	choice)
		all=$(echo "$values" | tr '|' ' ')
		for c in $all; do write_ok "$p" "$c"; done
		# Every choice shown, the current one in brackets, as THP's files.
		assert_eq "$(cat "$p" | tr -d '[]')" "$all" "$d/$f lists every choice"
		first=${all%% *}
		for bad in "" x "${first}x" "$(echo "$first" | tr a-z A-Z)" " $first" 0 1; do refused "$p" "$bad"; done ;;
	esac
	# Back to the defaults, so that the next knob starts from the table.
	[ "$d" = . ] || defaults "$d"
done </tmp/rows

# Cross-knob rules, each from the defaults.
while IFS="$(printf '\t')" read -r d f rule values; do
	check_rule "$d" "$f" "$rule"
	defaults "$d"
done <"$rules"

# "enabled" moves the feature's static key and its features line, and back.
for f in $(offered_features); do
	assert_eq "$(hooks_state "$f")" off "$f key at load"
	echo 1 >"$MMTUNE_SYSFS/$f/enabled" || fail "enabling $f"
	assert_eq "$(hooks_state "$f")" on "$f key with enabled=1"
	grep -qx "$f on" $MMTUNE_SYSFS/features || fail "features does not say '$f on'"
	refused "$MMTUNE_SYSFS/$f/enabled" 2
	assert_eq "$(hooks_state "$f")" on "$f key after a refused write"
	echo 0 >"$MMTUNE_SYSFS/$f/enabled" || fail "disabling $f"
	assert_eq "$(hooks_state "$f")" off "$f key with enabled=0"
	grep -qx "$f off" $MMTUNE_SYSFS/features || fail "features does not say '$f off'"
done
unload_mmtune
assert_hooks_idle

# Guest test helpers for the cgroup_policy feature. Sourced by lib.sh.
MMTUNE_CGP=$MMTUNE_SYSFS/cgroup_policy
CGROUP2=/sys/fs/cgroup

# cgp_setup: mmtune loaded, cgroup_policy on, the memory controller on for
# the root's children.
cgp_setup() {
	load_mmtune
	echo 1 >"$MMTUNE_CGP/enabled" || fail "enable cgroup_policy"
	echo +memory >$CGROUP2/cgroup.subtree_control
}
# cgp_mkdir PATH...: cgroups (relative to the root) and their parents,
# each with the memory controller (on in every parent's subtree_control;
# a leaf stays a leaf, so that processes may join it).
cgp_mkdir() {
	for _p in "$@"; do
		_d=$CGROUP2
		for _c in $(echo "$_p" | tr / ' '); do
			echo +memory >"$_d/cgroup.subtree_control" 2>/dev/null
			_d=$_d/$_c
			[ -d "$_d" ] || mkdir "$_d" || fail "mkdir $_d"
		done
	done
}
# cgp_set LINE: one command to the entries file; must succeed.
cgp_set() { assert_eq "$(sysfs_write "$MMTUNE_CGP/entries" "$1")" ok "entries <- '$1'"; }
# cgp_stat PATH NAME: a counter of PATH's line in stats (0 if not shown).
cgp_stat() {
	awk -v p="$1" -v k="$2" '$1 == p { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } } END { print v + 0 }' "$MMTUNE_CGP/stats"
}
# cgp_folios OUT KB: the folios of KB swap_integrity found backing its
# region (6.12: region_folios of --mthp KB; 6.1: its THPs).
cgp_folios() {
	if mthp_has "$2"; then si_delta "$1" region_folios; else si_delta "$1" thps; fi
}
# cgp_sizes: the sizes the swap and fault tests take on this line.
cgp_sizes() { if mthp_has 16; then echo 16 64 2048; else echo 2048; fi; }
# cgp_only KB: faults allocate KB folios only (6.1: THP always).
cgp_only() { if mthp_has "$1"; then mthp_only "$1"; else thp_always; fi; }
# cgp_run OUT CGROUP KB ARGS...: swap_integrity in a new child of CGROUP
# (a path), faulting KB folios; known bytes out and back, compared.
cgp_run() {
	_out=$1 _cg=$2 _kb=$3
	shift 3
	cgp_only "$_kb"
	swap_refresh
	_m=
	mthp_has "$_kb" && _m="--mthp $_kb"
	info "--- ${_kb}kB in $_cg: swap_integrity $*"
	# shellcheck disable=SC2086 # $_m is one option and its value, or none
	swap_integrity --thp $_m --cgroup-parent "$CGROUP2$_cg" "$@" >"$_out" 2>&1
	_rc=$?
	cat "$_out"
	[ $_rc -eq 0 ] || fail "${_kb}kB in $_cg: swap round trip failed (exit $_rc)"
}

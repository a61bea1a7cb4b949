# rmmod under load: sparse and dense THPs paged out in a loop by two
# processes while the module is loaded with adaptive/always, unloaded,
# loaded again and unloaded. Every round reads back intact, the console
# stays clean (run.sh), and every hook is off at the end. On a line without
# split_zero (6.12, whose own split maps zero subpages to the zero page)
# thp_swap alone, adaptive.
. /lib.sh
require_feature thp_swap
sz=
[ "$(feature_offer split_zero)" = offered ] && sz=always
thp_setup zram adaptive $sz
rm -f /tmp/bgfail /tmp/stop /tmp/rounds.*
load_loop() {	# SEED DIRTY
	i=0
	while [ ! -e /tmp/stop ]; do
		i=$((i + 1))
		thp_sparse --size 16 --dirty "$2" --seed $(($1 + i)) >/tmp/bg.$1 2>&1 ||
			{ cat /tmp/bg.$1 >>/tmp/bgfail; return; }
		# Whole or not at all: rounds() never reads a half-written file.
		echo $i >/tmp/rounds.$1.new && mv /tmp/rounds.$1.new /tmp/rounds.$1
	done
}
rounds() { cat /tmp/rounds.$1 2>/dev/null || echo 0; }
# both_grow WHEN: a sparse and a dense round each end after this point.
# Waiting for rounds, not sleeping, keeps every step under load however
# slow the kernel (the debug kernel took 15 s for one round).
both_grow() {
	assert_grows "sparse rounds $1" 600 rounds 100
	assert_grows "dense rounds $1" 600 rounds 200
}
load_loop 100 1 &
a=$!
load_loop 200 512 &
b=$!
both_grow "with the module loaded"
# The hook decided: sparse THPs split, dense ones kept whole.
assert_ge "$(thp_knob thp_split)" 1 "thp_swap/thp_split with the module loaded"
assert_ge "$(thp_knob thp_whole)" 1 "thp_swap/thp_whole with the module loaded"
unload_mmtune
info "unloaded under load"
both_grow "after the rmmod"
load_mmtune
thp_policy adaptive
[ -z "$sz" ] || split_zero_mode $sz
both_grow "after the reload"
unload_mmtune
touch /tmp/stop
wait $a $b
[ -e /tmp/bgfail ] && { cat /tmp/bgfail; fail "a round under load failed"; }
assert_hooks_idle
